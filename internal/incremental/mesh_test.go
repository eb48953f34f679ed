package incremental

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	accessv1alpha3 "github.com/switchyard-dev/switchyard/apis/smi/access/v1alpha3"
	specsv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/specs/v1alpha4"
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
		// The first Service's pods run as a destination its second
		// Service's pods may call, so that access is resolved too.
		for i, name := range names[:2] {
			svc := snap.Services[types.NamespacedName{Namespace: ns, Name: name}]
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-pod", Labels: svc.Spec.Selector},
				Spec:       corev1.PodSpec{ServiceAccountName: name},
				Status:     corev1.PodStatus{PodIPs: []corev1.PodIP{{IP: fmt.Sprintf("10.250.%d.%d", len(keys)%250, i+1)}}},
			}
			k, _ = snap.Upsert(pod)
			keys = append(keys, k)
		}
		tt := &accessv1alpha3.TrafficTarget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "target"},
			Spec: accessv1alpha3.TrafficTargetSpec{
				Destination: accessv1alpha3.IdentityBindingSubject{Kind: "ServiceAccount", Name: names[0]},
				Sources:     []accessv1alpha3.IdentityBindingSubject{{Kind: "ServiceAccount", Name: names[1]}},
			},
		}
		k, _ = snap.Upsert(tt)
		keys = append(keys, k)
		// A second target lets the first Service's own pods make the
		// requests an HTTPRouteGroup's match names: rules to resolve.
		rg := &specsv1alpha4.HTTPRouteGroup{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reads"},
			Spec:       specsv1alpha4.HTTPRouteGroupSpec{Matches: []specsv1alpha4.HTTPMatch{{Name: "get", PathRegex: "/Get.*", Methods: []string{"POST"}}}},
		}
		k, _ = snap.Upsert(rg)
		keys = append(keys, k)
		reads := tt.DeepCopy()
		reads.Name = "reads"
		reads.Spec.Sources = []accessv1alpha3.IdentityBindingSubject{{Kind: "ServiceAccount", Name: names[0]}}
		reads.Spec.Rules = []accessv1alpha3.TrafficTargetRule{{Kind: "HTTPRouteGroup", Name: "reads"}}
		k, _ = snap.Upsert(reads)
		keys = append(keys, k)
	}
	return keys
}
