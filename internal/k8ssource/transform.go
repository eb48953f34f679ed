package k8ssource

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// transform trims an object, with compact, before the
// informer caches it: the cache holds every object of the cluster (every
// Secret and Node included), so what no build reads is dropped as it
// arrives, and what thousands of objects repeat is shared
// (objects.Compact).
//
//   - metadata.managedFields and kubectl's last-applied annotation, from
//     every object, and what objects.Compact lists of Services and
//     EndpointSlices; without the mesh, Services' selectors too
//     (objects.CompactWithoutMesh);
//   - a Node's status (images, conditions, addresses) and a Namespace's
//     spec and status: builds read only their labels and annotations;
//   - all of a Pod but its labels, ServiceAccount and IPs, which is what
//     the mesh reads to tell who calls (the cache would otherwise hold
//     every container spec of the cluster). Pods of every namespace keep
//     that much, so that a namespace joining the mesh needs no re-list;
//     only those of mesh namespaces reach builds (meshpods.go);
//   - the data of Secrets that cannot hold a certificate: only
//     kubernetes.io/tls and Opaque Secrets keep theirs (service account
//     tokens, registry credentials, Helm releases do not).
//
// The informer hands it a freshly decoded object that nothing
// else references yet, so it is changed in place; a Service or an
// EndpointSlice is returned in the form a snapshot holds it
// (objects.Held), which is what the informer then caches. Given an
// object it returned, it returns it as it is.
func transform(obj any, compact func(runtime.Object)) (any, error) {
	ro, ok := obj.(runtime.Object)
	if _, err := meta.Accessor(obj); err != nil || !ok {
		return obj, nil // a tombstone: it is never transformed
	}
	compact(ro)
	switch o := obj.(type) {
	case *corev1.Node:
		o.Status = corev1.NodeStatus{}
	case *corev1.Namespace:
		o.Spec, o.Status = corev1.NamespaceSpec{}, corev1.NamespaceStatus{}
	case *corev1.Pod:
		o.Spec = corev1.PodSpec{ServiceAccountName: o.Spec.ServiceAccountName}
		o.Status = corev1.PodStatus{PodIPs: o.Status.PodIPs}
		o.OwnerReferences = nil
	case *corev1.Secret:
		if !keepsData(o.Type) {
			o.Data, o.StringData = nil, nil
		}
	}
	// Services and EndpointSlices are cached in the form a snapshot holds
	// them, so that a cluster's are held once.
	return objects.Held(ro), nil
}

// keepsData reports whether a Secret of this type may hold a certificate
// or CA bundle a build reads.
func keepsData(t corev1.SecretType) bool {
	return t == corev1.SecretTypeTLS || t == corev1.SecretTypeOpaque || t == ""
}

// trim is the transform of this source's objects: selectors are kept only
// for the mesh, the one reader of them.
func (s *Source) trim(obj any) (any, error) {
	if s.meshNS != nil {
		return transform(obj, objects.Compact)
	}
	return transform(obj, objects.CompactWithoutMesh)
}
