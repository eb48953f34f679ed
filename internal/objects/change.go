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

// ApplyAll applies changes in order. On a snapshot that holds nothing yet
// and a batch of upserts alone (a source's first, every object it read),
// it fills the snapshot as SnapshotOf does, each map made at its size and
// the kinds on every core, which gives the same snapshot as applying
// them one by one: at 100,000 objects that takes a fraction of a second
// on one core. An object of an unsupported type is an error; the changes
// before it are applied then, unless the snapshot was empty.
func (s *Snapshot) ApplyAll(changes []Change) error {
	if s.empty() && len(changes) > 1 {
		objs := make([]runtime.Object, 0, len(changes))
		for _, c := range changes {
			if c.Object == nil {
				objs = nil // a deletion's order matters: one at a time
				break
			}
			objs = append(objs, c.Object)
		}
		if objs != nil {
			filled, err := SnapshotOf(objs)
			if err != nil {
				return err
			}
			*s = *filled
			return nil
		}
	}
	for _, c := range changes {
		if err := s.Apply(c); err != nil {
			return err
		}
	}
	return nil
}

// empty reports whether the snapshot holds no object of any kind.
func (s *Snapshot) empty() bool {
	return len(s.HTTPProxies)+len(s.ExtensionServices)+len(s.Delegations)+len(s.Services)+
		len(s.EndpointSlices)+len(s.Secrets)+len(s.Nodes)+len(s.Namespaces)+len(s.TrafficSplits)+
		len(s.HTTPRouteGroups)+len(s.TrafficTargets)+len(s.Pods) == 0
}
