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
