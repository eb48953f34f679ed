package objects

import "k8s.io/apimachinery/pkg/runtime"

// Change is one object added, updated or (with a nil Object) deleted.
// Sources emit changes; the build loop applies them to its Snapshot.
type Change struct {
	Key    Key
	Object runtime.Object
}

// Apply applies a change. An object of an unsupported type is an error and
// leaves the snapshot untouched.
func (s *Snapshot) Apply(c Change) error {
	if c.Object == nil {
		s.Delete(c.Key)
		return nil
	}
	_, err := s.Upsert(c.Object)
	return err
}
