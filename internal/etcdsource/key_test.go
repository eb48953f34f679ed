package etcdsource

import (
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// TestKeyLayout round-trips every kind through its key, and refuses keys
// that do not follow the layout with a message saying what would.
func TestKeyLayout(t *testing.T) {
	for k := objects.KindHTTPProxy; k <= objects.KindNode; k++ {
		key := objects.Key{Kind: k, Namespace: "shop", Name: "web"}
		if k == objects.KindNode {
			key.Namespace = ""
		}
		ek := ObjectKey(DefaultPrefix, key)
		got, err := ParseKey(DefaultPrefix, ek)
		if err != nil || got != key {
			t.Errorf("ParseKey(%q) = %v, %v; want %v", ek, got, err, key)
		}
		if ownKey(DefaultPrefix, ek) || !ownKey(DefaultPrefix, StatusKey(DefaultPrefix, key)) {
			t.Errorf("%s: the object key must be read and the status key %s ignored", ek, StatusKey(DefaultPrefix, key))
		}
	}
	if got := ObjectKey("/p/", objects.Key{Kind: objects.KindHTTPProxy, Namespace: "a", Name: "b"}); got != "/p/httpproxy/a/b" {
		t.Errorf("ObjectKey = %q, want /p/httpproxy/a/b", got)
	}
	for key, want := range map[string]string{
		"/switchyard/gadget/a/b":       "not a kind",
		"/switchyard/service/a":        "<namespace>/<name>",
		"/switchyard/service/a/b/c":    "<namespace>/<name>",
		"/switchyard/service//b":       "<namespace>/<name>",
		"/switchyard/node/a/b":         "node/<name>",
		"/elsewhere/service/a/b":       "not under the prefix",
		"/switchyard/HTTPProxy/shop/x": "not a kind",
	} {
		if _, err := ParseKey(DefaultPrefix, key); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseKey(%q) = %v, want an error saying %q", key, err, want)
		}
	}
	if CleanPrefix("/a") != "/a/" || CleanPrefix("") != DefaultPrefix || CleanPrefix("/a/") != "/a/" {
		t.Error("CleanPrefix must end a prefix in / and default an empty one")
	}
}

// TestObjectRangesLeaveOutOwnKeys: every kind's keys fall in exactly one
// of the ranges the source reads, and the status and election keys
// Switchyard writes in none.
func TestObjectRangesLeaveOutOwnKeys(t *testing.T) {
	ranges := objectRanges(DefaultPrefix)
	in := func(key string) int {
		n := 0
		for _, r := range ranges {
			if key >= r.from && key < r.end {
				n++
			}
		}
		return n
	}
	for k := objects.KindHTTPProxy; k <= objects.KindNode; k++ {
		key := ObjectKey(DefaultPrefix, objects.Key{Kind: k, Namespace: "shop", Name: "web"})
		if n := in(key); n != 1 {
			t.Errorf("%s is in %d of the ranges read, want 1", key, n)
		}
		if n := in(StatusKey(DefaultPrefix, objects.Key{Kind: k, Namespace: "shop", Name: "web"})); n != 0 {
			t.Errorf("the status key of a %s is read", k)
		}
	}
	for _, own := range []string{DefaultPrefix + statusDir, DefaultPrefix + leaderDir + "status/694d7e2b", DefaultPrefix + "status/\xff"} {
		if n := in(own); n != 0 {
			t.Errorf("%q is in a range read", own)
		}
	}
	if n := in("/switchyard0"); n != 0 {
		t.Errorf("a key after the prefix is read")
	}
}
