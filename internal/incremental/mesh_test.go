package incremental

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	splitv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/split/v1alpha4"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// addMesh puts every namespace with Services in the mesh and splits each
// namespace's first Service between its first two, so that the random
// sequences of TestIncrementalEqualsFullBuild, which change Services and
// endpoints, also change the mesh. It returns the keys it added.
func addMesh(snap *objects.Snapshot) []objects.Key {
	byNS := map[string][]string{}
	for nn := range snap.Services {
		byNS[nn.Namespace] = append(byNS[nn.Namespace], nn.Name)
	}
	var keys []objects.Key
	for ns, names := range byNS {
		sort.Strings(names)
		k, _ := snap.Upsert(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Annotations: map[string]string{dag.MeshAnnotation: "true"}}})
		keys = append(keys, k)
		if len(names) < 2 {
			continue
		}
		ts := &splitv1alpha4.TrafficSplit{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "split"},
			Spec: splitv1alpha4.TrafficSplitSpec{Service: names[0], Backends: []splitv1alpha4.TrafficSplitBackend{
				{Service: names[0], Weight: 70}, {Service: names[1], Weight: 30},
			}},
		}
		k, _ = snap.Upsert(ts)
		keys = append(keys, k)
	}
	return keys
}
