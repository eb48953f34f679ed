package dirsource

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// Object is one object read from a manifest by Decode.
type Object struct {
	Key    objects.Key
	Object runtime.Object
	// Line is the 1-based line of the document that defined it.
	Line int
}

// Decode reads every document of one manifest (YAML or JSON, documents
// separated by "---", Lists expanded) with the same strict decoder and
// checks Load uses, so that a source other than a directory (an etcd
// key, a file given to a command) accepts exactly what a directory does.
// name stands for the file in each Problem's File: an etcd key, say.
//
// Like Load it never fails as a whole: what cannot be read becomes a
// Problem and the rest is returned, in document order. Of the options only
// Mesh and KeepAll apply.
func Decode(name string, data []byte, opts ...Option) ([]Object, []Problem) {
	ds, ps := decodeFile(name, data, newOptions(opts).compact())
	out := make([]Object, len(ds))
	for i, d := range ds {
		out[i] = Object{Key: d.key, Object: d.obj, Line: d.line}
	}
	return out, ps
}
