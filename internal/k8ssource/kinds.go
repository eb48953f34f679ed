package k8ssource

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	accessv1alpha3 "github.com/switchyard-dev/switchyard/apis/smi/access/v1alpha3"
	specsv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/specs/v1alpha4"
	splitv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/split/v1alpha4"
	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// kindInfo is how the source watches one kind of object.
type kindInfo struct {
	kind       objects.Kind
	gv         schema.GroupVersion
	resource   string
	namespaced bool
	example    runtime.Object
	// same reports whether two versions of an object are the same for a
	// build, so that an update the build would not see (a status write, a
	// Node heartbeat) does not cause one.
	same func(a, b runtime.Object) bool
}

var kinds = []kindInfo{
	{objects.KindHTTPProxy, switchyardv1.SchemeGroupVersion, "httpproxies", true, &switchyardv1.HTTPProxy{}, sameSpec},
	{objects.KindExtensionService, switchyardv1alpha1.SchemeGroupVersion, "extensionservices", true, &switchyardv1alpha1.ExtensionService{}, sameSpec},
	{objects.KindTLSCertificateDelegation, switchyardv1.SchemeGroupVersion, "tlscertificatedelegations", true, &switchyardv1.TLSCertificateDelegation{}, sameSpec},
	{objects.KindService, corev1.SchemeGroupVersion, "services", true, &corev1.Service{}, sameService},
	{objects.KindEndpointSlice, discoveryv1.SchemeGroupVersion, "endpointslices", true, &discoveryv1.EndpointSlice{}, sameSlice},
	{objects.KindSecret, corev1.SchemeGroupVersion, "secrets", true, &corev1.Secret{}, sameSecret},
	{objects.KindNode, corev1.SchemeGroupVersion, "nodes", false, &corev1.Node{}, sameNode},
}

// meshKinds are watched only with Config.Mesh: a cluster without the SMI
// CRDs must not keep the source from syncing. Namespaces are read for
// their mesh annotation, Pods for the ServiceAccount behind each pod IP.
var meshKinds = []kindInfo{
	{objects.KindNamespace, corev1.SchemeGroupVersion, "namespaces", false, &corev1.Namespace{}, sameMeta},
	{objects.KindTrafficSplit, splitv1alpha4.SchemeGroupVersion, "trafficsplits", true, &splitv1alpha4.TrafficSplit{}, sameSpec},
	{objects.KindHTTPRouteGroup, specsv1alpha4.SchemeGroupVersion, "httproutegroups", true, &specsv1alpha4.HTTPRouteGroup{}, sameSpec},
	{objects.KindTrafficTarget, accessv1alpha3.SchemeGroupVersion, "traffictargets", true, &accessv1alpha3.TrafficTarget{}, sameSpec},
	{objects.KindPod, corev1.SchemeGroupVersion, "pods", true, &corev1.Pod{}, samePod},
}

// samePod compares what the mesh reads of a Pod: its labels (which
// Services select it), its ServiceAccount and its IPs. Every other change
// (a container restarting, a condition flipping) causes no build.
func samePod(a, b runtime.Object) bool {
	pa, okA := a.(*corev1.Pod)
	pb, okB := b.(*corev1.Pod)
	return okA && okB && sameMeta(a, b) && pa.Spec.ServiceAccountName == pb.Spec.ServiceAccountName &&
		equality.Semantic.DeepEqual(pa.Status.PodIPs, pb.Status.PodIPs)
}

// sameMeta compares what a build reads of any object's metadata.
func sameMeta(a, b runtime.Object) bool {
	ma, errA := meta.Accessor(a)
	mb, errB := meta.Accessor(b)
	if errA != nil || errB != nil {
		return false
	}
	return equality.Semantic.DeepEqual(ma.GetLabels(), mb.GetLabels()) &&
		equality.Semantic.DeepEqual(ma.GetAnnotations(), mb.GetAnnotations())
}

// sameSpec compares Switchyard's own objects: their CRDs have a status
// subresource, so the API server bumps metadata.generation on every spec
// change and never on a status change.
func sameSpec(a, b runtime.Object) bool {
	ma, errA := meta.Accessor(a)
	mb, errB := meta.Accessor(b)
	return errA == nil && errB == nil && ma.GetGeneration() == mb.GetGeneration() && sameMeta(a, b)
}

// sameService and sameSlice compare the forms the informers cache
// (transform): everything of them but the resourceVersion.
func sameService(a, b runtime.Object) bool {
	sa, okA := a.(*objects.Service)
	sb, okB := b.(*objects.Service)
	return okA && okB && sameBut(*sa, *sb, func(s *objects.Service) { s.ResourceVersion = "" })
}

func sameSlice(a, b runtime.Object) bool {
	ea, okA := a.(*objects.EndpointSlice)
	eb, okB := b.(*objects.EndpointSlice)
	return okA && okB && sameBut(*ea, *eb, func(es *objects.EndpointSlice) { es.ResourceVersion = "" })
}

// sameBut compares copies of a and b after drop.
func sameBut[T any](a, b T, drop func(*T)) bool {
	drop(&a)
	drop(&b)
	return equality.Semantic.DeepEqual(a, b)
}

func sameSecret(a, b runtime.Object) bool {
	sa, okA := a.(*corev1.Secret)
	sb, okB := b.(*corev1.Secret)
	return okA && okB && sameMeta(a, b) && sa.Type == sb.Type && equality.Semantic.DeepEqual(sa.Data, sb.Data)
}

func sameNode(a, b runtime.Object) bool {
	na, okA := a.(*corev1.Node)
	nb, okB := b.(*corev1.Node)
	return okA && okB && sameMeta(a, b) && equality.Semantic.DeepEqual(na.Spec, nb.Spec)
}
