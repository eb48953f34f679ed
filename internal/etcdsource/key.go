package etcdsource

import (
	"fmt"
	"strings"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// DefaultPrefix is where objects live unless --etcd-prefix says otherwise.
const DefaultPrefix = "/switchyard/"

// statusDir and leaderDir are the parts of the prefix that hold what
// Switchyard writes; the source ignores them, and no kind is named so.
const (
	statusDir = "status/"
	leaderDir = "leader/"
)

// CleanPrefix makes a prefix end in "/", so that "/switchyard" and
// "/switchyard/" are the same layout and "/switchyard-test/" is not under
// either.
func CleanPrefix(p string) string {
	if p == "" {
		return DefaultPrefix
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

// kindSegment is how a kind is spelled in a key: its name in lower case.
func kindSegment(k objects.Kind) string { return strings.ToLower(k.String()) }

var kindBySegment = func() map[string]objects.Kind {
	m := map[string]objects.Kind{}
	for k := objects.KindHTTPProxy; k <= objects.KindNode; k++ {
		m[kindSegment(k)] = k
	}
	return m
}()

// ObjectKey is the etcd key of an object: <prefix><kind>/<namespace>/<name>,
// or <prefix>node/<name> for a Node, which has no namespace.
func ObjectKey(prefix string, k objects.Key) string {
	if k.Kind == objects.KindNode {
		return prefix + kindSegment(k.Kind) + "/" + k.Name
	}
	return prefix + kindSegment(k.Kind) + "/" + k.Namespace + "/" + k.Name
}

// StatusKey is where the status of an object is written:
// <prefix>status/<kind>/<namespace>/<name>.
func StatusKey(prefix string, k objects.Key) string {
	return ObjectKey(prefix+statusDir, k)
}

// ownKey reports whether a key under the prefix is one Switchyard writes
// (status, leader election) rather than an object.
func ownKey(prefix, key string) bool {
	rest := strings.TrimPrefix(key, prefix)
	return strings.HasPrefix(rest, statusDir) || strings.HasPrefix(rest, leaderDir)
}

// ParseKey reads the object a key names, or says what is wrong with it.
func ParseKey(prefix, key string) (objects.Key, error) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return objects.Key{}, fmt.Errorf("key is not under the prefix %s", prefix)
	}
	parts := strings.Split(rest, "/")
	kind, ok := kindBySegment[parts[0]]
	if !ok {
		return objects.Key{}, fmt.Errorf("%q is not a kind switchyard reads: keys are %s<kind>/<namespace>/<name>, kind one of %s", parts[0], prefix, kindList())
	}
	switch {
	case kind == objects.KindNode && len(parts) == 2 && parts[1] != "":
		return objects.Key{Kind: kind, Name: parts[1]}, nil
	case kind == objects.KindNode:
		return objects.Key{}, fmt.Errorf("a Node's key is %snode/<name>", prefix)
	case len(parts) == 3 && parts[1] != "" && parts[2] != "":
		return objects.Key{Kind: kind, Namespace: parts[1], Name: parts[2]}, nil
	}
	return objects.Key{}, fmt.Errorf("key is not %s%s/<namespace>/<name>", prefix, parts[0])
}

func kindList() string {
	var names []string
	for k := objects.KindHTTPProxy; k <= objects.KindNode; k++ {
		names = append(names, kindSegment(k))
	}
	return strings.Join(names, ", ")
}
