package objects

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Service is what a build reads of a core/v1 Service, which is how a
// Snapshot holds one: the Kubernetes type's struct is 640 bytes, this
// one's about a sixth of that. Its fields have the Kubernetes names and
// places (svc.Spec.Ports, svc.Annotations), so that what reads one reads
// as it would read the Kubernetes object.
//
// Sources may hand a Snapshot either form: Upsert turns a Kubernetes
// Service into this one (CompactService). It is never changed once handed
// over.
type Service struct {
	Namespace, Name string
	// ResourceVersion is the API server's, for the Kubernetes source's
	// informers, which tell an update from a resync by it.
	ResourceVersion string
	// Annotations are those of the Kubernetes object, less what Compact
	// drops: builds read the drain, mesh and upstream annotations.
	Annotations map[string]string
	Spec        ServiceSpec
}

// ServiceSpec is what a build reads of a Service's spec. Selector is read
// by the mesh only; a source without the mesh drops it first
// (CompactWithoutMesh).
type ServiceSpec struct {
	Type         corev1.ServiceType
	ExternalName string
	Ports        []corev1.ServicePort
	Selector     map[string]string
}

// CompactService returns what a build reads of svc, sharing its maps and
// ports: svc must not be changed after.
func CompactService(svc *corev1.Service) *Service {
	return &Service{
		Namespace:       svc.Namespace,
		Name:            svc.Name,
		ResourceVersion: svc.ResourceVersion,
		Annotations:     svc.Annotations,
		Spec: ServiceSpec{
			Type:         svc.Spec.Type,
			ExternalName: svc.Spec.ExternalName,
			Ports:        slices.Clip(svc.Spec.Ports),
			Selector:     svc.Spec.Selector,
		},
	}
}

// Kubernetes returns svc as a Kubernetes Service of its own, for a caller
// that edits one (a test, a generator of changes).
func (svc *Service) Kubernetes() *corev1.Service {
	out := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: svc.objectMeta(),
		Spec: corev1.ServiceSpec{
			Type:         svc.Spec.Type,
			ExternalName: svc.Spec.ExternalName,
			Ports:        make([]corev1.ServicePort, len(svc.Spec.Ports)),
			Selector:     maps.Clone(svc.Spec.Selector),
		},
	}
	for i := range out.Spec.Ports {
		svc.Spec.Ports[i].DeepCopyInto(&out.Spec.Ports[i])
	}
	return out
}

// GetObjectMeta returns a copy of the Service's metadata, for
// meta.Accessor (the informers' key function): setting a field of it
// changes nothing.
func (svc *Service) GetObjectMeta() metav1.Object {
	m := svc.objectMeta()
	return &m
}

func (svc *Service) objectMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name, ResourceVersion: svc.ResourceVersion, Annotations: maps.Clone(svc.Annotations)}
}

// GetObjectKind reports v1 Service, which every Service is: it holds no
// TypeMeta of its own.
func (*Service) GetObjectKind() schema.ObjectKind {
	return fixedKind(corev1.SchemeGroupVersion.WithKind("Service"))
}

// DeepCopyObject copies the Service with its maps and ports.
func (svc *Service) DeepCopyObject() runtime.Object {
	out := *svc
	out.Annotations = maps.Clone(svc.Annotations)
	out.Spec.Ports = slices.Clone(svc.Spec.Ports)
	out.Spec.Selector = maps.Clone(svc.Spec.Selector)
	return &out
}

// fixedKind is the apiVersion and kind of a type that holds no TypeMeta:
// setting it does nothing.
type fixedKind schema.GroupVersionKind

func (fixedKind) SetGroupVersionKind(schema.GroupVersionKind) {}

func (k fixedKind) GroupVersionKind() schema.GroupVersionKind { return schema.GroupVersionKind(k) }
