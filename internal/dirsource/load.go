package dirsource

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// DefaultMaxFileSize is the largest manifest file read by default. Larger
// files are reported and skipped rather than read into memory.
const DefaultMaxFileSize = 16 << 20

// Option changes how a tree is read.
type Option func(*options)

type options struct {
	maxFileSize int64
	mesh        bool
	keepAll     bool
}

// WithMaxFileSize sets the largest file that is read; larger files are
// skipped with a Problem. Values below 1 keep the default.
func WithMaxFileSize(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.maxFileSize = n
		}
	}
}

// Mesh says whether the builds fed by what is read run the mesh
// (dag.Options.Mesh). Without the mesh, Services are kept without their
// selectors, which only the mesh reads (objects.CompactWithoutMesh): a
// third of what a Service costs. Without this option everything a build
// may read is kept, as for the mesh.
func Mesh(on bool) Option {
	return func(o *options) { o.mesh = on }
}

// KeepAll keeps every field of what is read, making nothing smaller: for
// a caller that writes the objects elsewhere (etcd apply) rather than
// building from them, where what no build reads is still the user's.
func KeepAll() Option {
	return func(o *options) { o.keepAll = true }
}

// compactor makes an object smaller as it is read, and returns what is
// kept of it; shared says that its decoder shared its label and selector
// values among the file's objects.
type compactor func(obj runtime.Object, shared bool) runtime.Object

// compact is what makes an object smaller as it is read. Services and
// EndpointSlices are kept in the form a snapshot holds them
// (objects.Held), so that no Kubernetes copy of them stays behind in the
// tree.
func (o options) compact() compactor {
	if o.keepAll {
		return func(obj runtime.Object, _ bool) runtime.Object { return obj }
	}
	full := objects.CompactWithoutMesh
	if o.mesh {
		full = objects.Compact
	}
	return func(obj runtime.Object, shared bool) runtime.Object {
		if es, ok := obj.(*discoveryv1.EndpointSlice); ok {
			return objects.CompactSlice(es)
		}
		if shared {
			objects.CompactShared(obj, o.mesh)
		} else {
			full(obj)
		}
		return objects.Held(obj)
	}
}

func newOptions(opts []Option) options {
	o := options{maxFileSize: DefaultMaxFileSize, mesh: true}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Load reads every *.yaml and *.yml file under root (recursively, in sorted
// order, skipping hidden files and directories) into a new Snapshot.
//
// Problems with the content are returned as Problems and never stop the
// load. err is only for root itself being unusable (missing, not a
// directory, unreadable), and says what to do about it.
func Load(root string, opts ...Option) (*objects.Snapshot, []Problem, error) {
	if err := checkRoot(root); err != nil {
		return nil, nil, err
	}
	t := newTree(root, newOptions(opts))
	t.sync(".", nil, false)
	return t.snapshot(), t.problems(), nil
}

// checkRoot reports why root cannot be read as a source directory.
func checkRoot(root string) error {
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("source directory %s does not exist: create it, or pass the directory that holds the manifests", root)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("source directory %s: %w: make it and its parents readable by the user switchyard runs as", root, err)
	case err != nil:
		return fmt.Errorf("source directory %s: %w", root, err)
	case !fi.IsDir():
		return fmt.Errorf("source %s is a file, not a directory: pass the directory that holds it", root)
	}
	f, err := os.Open(root)
	if err == nil {
		_, err = f.ReadDir(1)
		_ = f.Close() // read-only: nothing to lose
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("source directory %s cannot be listed: %w: make it readable by the user switchyard runs as", root, err)
	}
	return nil
}
