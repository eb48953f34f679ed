package objects

import (
	"fmt"
	"iter"
	"maps"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	accessv1alpha3 "github.com/switchyard-dev/switchyard/apis/smi/access/v1alpha3"
	specsv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/specs/v1alpha4"
	splitv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/split/v1alpha4"
	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
)

// ServiceNameLabel is the label that ties an EndpointSlice to its Service.
const ServiceNameLabel = discoveryv1.LabelServiceName

// Snapshot is the set of objects a build reads. Fields are read directly by
// the builder; they are written only through Upsert and Delete so that the
// EndpointSlice and delegation indexes stay consistent.
type Snapshot struct {
	HTTPProxies       map[types.NamespacedName]*switchyardv1.HTTPProxy
	ExtensionServices map[types.NamespacedName]*switchyardv1alpha1.ExtensionService
	Delegations       map[types.NamespacedName]*switchyardv1.TLSCertificateDelegation
	Services          map[types.NamespacedName]*Service
	EndpointSlices    map[types.NamespacedName]*EndpointSlice
	Secrets           map[types.NamespacedName]*corev1.Secret
	Nodes             map[string]*corev1.Node
	// Namespaces, TrafficSplits and HTTPRouteGroups are read only for the
	// mesh: a namespace's annotation opts its Services in.
	Namespaces      map[string]*corev1.Namespace
	TrafficSplits   map[types.NamespacedName]*splitv1alpha4.TrafficSplit
	HTTPRouteGroups map[types.NamespacedName]*specsv1alpha4.HTTPRouteGroup
	// TrafficTargets and Pods decide who may call a mesh Service: Pods
	// give the ServiceAccount each pod IP runs as.
	TrafficTargets map[types.NamespacedName]*accessv1alpha3.TrafficTarget
	Pods           map[types.NamespacedName]*corev1.Pod

	// slicesByService indexes EndpointSlices by the Service they belong to.
	slicesByService sliceIndex
	// delegationsByNamespace indexes TLSCertificateDelegations by namespace,
	// then name, so that a cross-namespace Secret lookup reads only the
	// delegations of the Secret's namespace.
	delegationsByNamespace map[string]map[string]*switchyardv1.TLSCertificateDelegation
}

// NewSnapshot returns an empty snapshot.
func NewSnapshot() *Snapshot {
	return &Snapshot{
		HTTPProxies:       map[types.NamespacedName]*switchyardv1.HTTPProxy{},
		ExtensionServices: map[types.NamespacedName]*switchyardv1alpha1.ExtensionService{},
		Delegations:       map[types.NamespacedName]*switchyardv1.TLSCertificateDelegation{},
		Services:          map[types.NamespacedName]*Service{},
		EndpointSlices:    map[types.NamespacedName]*EndpointSlice{},
		Secrets:           map[types.NamespacedName]*corev1.Secret{},
		Nodes:             map[string]*corev1.Node{},
		Namespaces:        map[string]*corev1.Namespace{},
		TrafficSplits:     map[types.NamespacedName]*splitv1alpha4.TrafficSplit{},
		HTTPRouteGroups:   map[types.NamespacedName]*specsv1alpha4.HTTPRouteGroup{},
		TrafficTargets:    map[types.NamespacedName]*accessv1alpha3.TrafficTarget{},
		Pods:              map[types.NamespacedName]*corev1.Pod{},

		slicesByService:        newSliceIndex(),
		delegationsByNamespace: map[string]map[string]*switchyardv1.TLSCertificateDelegation{},
	}
}

// KeyOf returns the key of a supported object, or an error naming its type.
func KeyOf(obj runtime.Object) (Key, error) {
	switch o := obj.(type) {
	case *switchyardv1.HTTPProxy:
		return Key{KindHTTPProxy, o.Namespace, o.Name}, nil
	case *switchyardv1alpha1.ExtensionService:
		return Key{KindExtensionService, o.Namespace, o.Name}, nil
	case *switchyardv1.TLSCertificateDelegation:
		return Key{KindTLSCertificateDelegation, o.Namespace, o.Name}, nil
	case *corev1.Service:
		return Key{KindService, o.Namespace, o.Name}, nil
	case *Service:
		return Key{KindService, o.Namespace, o.Name}, nil
	case *discoveryv1.EndpointSlice:
		return Key{KindEndpointSlice, o.Namespace, o.Name}, nil
	case *EndpointSlice:
		return Key{KindEndpointSlice, o.Namespace, o.Name}, nil
	case *corev1.Secret:
		return Key{KindSecret, o.Namespace, o.Name}, nil
	case *corev1.Node:
		return Key{KindNode, "", o.Name}, nil
	case *corev1.Namespace:
		return Key{KindNamespace, "", o.Name}, nil
	case *splitv1alpha4.TrafficSplit:
		return Key{KindTrafficSplit, o.Namespace, o.Name}, nil
	case *specsv1alpha4.HTTPRouteGroup:
		return Key{KindHTTPRouteGroup, o.Namespace, o.Name}, nil
	case *accessv1alpha3.TrafficTarget:
		return Key{KindTrafficTarget, o.Namespace, o.Name}, nil
	case *corev1.Pod:
		return Key{KindPod, o.Namespace, o.Name}, nil
	default:
		return Key{}, fmt.Errorf("unsupported object type %T", obj)
	}
}

// Upsert adds or replaces an object and returns its key. A Kubernetes
// Service or EndpointSlice is held as a Service or EndpointSlice of this
// package (Held).
func (s *Snapshot) Upsert(obj runtime.Object) (Key, error) {
	key, err := KeyOf(obj)
	if err != nil {
		return key, err
	}
	obj = Held(obj)
	nn := key.NamespacedName()
	switch o := obj.(type) {
	case *switchyardv1.HTTPProxy:
		s.HTTPProxies[nn] = o
	case *switchyardv1alpha1.ExtensionService:
		s.ExtensionServices[nn] = o
	case *switchyardv1.TLSCertificateDelegation:
		s.Delegations[nn] = o
		s.indexDelegation(o)
	case *Service:
		s.Services[nn] = o
	case *EndpointSlice:
		s.removeSlice(nn)
		s.EndpointSlices[nn] = o
		s.indexSlice(o)
	case *corev1.Secret:
		s.Secrets[nn] = o
	case *corev1.Node:
		s.Nodes[o.Name] = o
	case *corev1.Namespace:
		s.Namespaces[o.Name] = o
	case *splitv1alpha4.TrafficSplit:
		s.TrafficSplits[nn] = o
	case *specsv1alpha4.HTTPRouteGroup:
		s.HTTPRouteGroups[nn] = o
	case *accessv1alpha3.TrafficTarget:
		s.TrafficTargets[nn] = o
	case *corev1.Pod:
		s.Pods[nn] = o
	}
	return key, nil
}

// Delete removes an object; deleting a missing object is not an error.
func (s *Snapshot) Delete(key Key) {
	nn := key.NamespacedName()
	switch key.Kind {
	case KindHTTPProxy:
		delete(s.HTTPProxies, nn)
	case KindExtensionService:
		delete(s.ExtensionServices, nn)
	case KindTLSCertificateDelegation:
		delete(s.Delegations, nn)
		s.removeDelegation(nn)
	case KindService:
		delete(s.Services, nn)
	case KindEndpointSlice:
		s.removeSlice(nn)
		delete(s.EndpointSlices, nn)
	case KindSecret:
		delete(s.Secrets, nn)
	case KindNode:
		delete(s.Nodes, key.Name)
	case KindNamespace:
		delete(s.Namespaces, key.Name)
	case KindTrafficSplit:
		delete(s.TrafficSplits, nn)
	case KindHTTPRouteGroup:
		delete(s.HTTPRouteGroups, nn)
	case KindTrafficTarget:
		delete(s.TrafficTargets, nn)
	case KindPod:
		delete(s.Pods, nn)
	}
}

// Get returns the object with the given key, or nil.
func (s *Snapshot) Get(key Key) runtime.Object {
	nn := key.NamespacedName()
	var obj runtime.Object
	switch key.Kind {
	case KindHTTPProxy:
		obj = nilSafe(s.HTTPProxies[nn])
	case KindExtensionService:
		obj = nilSafe(s.ExtensionServices[nn])
	case KindTLSCertificateDelegation:
		obj = nilSafe(s.Delegations[nn])
	case KindService:
		obj = nilSafe(s.Services[nn])
	case KindEndpointSlice:
		obj = nilSafe(s.EndpointSlices[nn])
	case KindSecret:
		obj = nilSafe(s.Secrets[nn])
	case KindNode:
		obj = nilSafe(s.Nodes[key.Name])
	case KindNamespace:
		obj = nilSafe(s.Namespaces[key.Name])
	case KindTrafficSplit:
		obj = nilSafe(s.TrafficSplits[nn])
	case KindHTTPRouteGroup:
		obj = nilSafe(s.HTTPRouteGroups[nn])
	case KindTrafficTarget:
		obj = nilSafe(s.TrafficTargets[nn])
	case KindPod:
		obj = nilSafe(s.Pods[nn])
	}
	return obj
}

// Held returns obj in the form a snapshot holds it: a Kubernetes Service
// or EndpointSlice as one of this package, which shares what it can of
// obj (obj must not change after), anything else as it is.
func Held(obj runtime.Object) runtime.Object {
	switch o := obj.(type) {
	case *corev1.Service:
		return CompactService(o)
	case *discoveryv1.EndpointSlice:
		return CompactSlice(o)
	}
	return obj
}

// nilSafe turns a typed nil pointer into an untyped nil interface, so that
// callers can compare Get's result with nil.
func nilSafe[T any, P interface {
	*T
	runtime.Object
}](p P) runtime.Object {
	if p == nil {
		return nil
	}
	return p
}

// SliceService returns the Service an EndpointSlice belongs to, and false
// when the slice carries no service-name label.
func SliceService(es *EndpointSlice) (types.NamespacedName, bool) {
	if es.Service == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: es.Namespace, Name: es.Service}, true
}

// SlicesFor returns the EndpointSlices of a Service, sorted by name. The
// list is the snapshot's: callers must not modify it.
func (s *Snapshot) SlicesFor(svc types.NamespacedName) []*EndpointSlice {
	return s.slicesByService.of(svc)
}

func (s *Snapshot) indexSlice(es *EndpointSlice) {
	if svc, ok := SliceService(es); ok {
		s.slicesByService.add(svc, es)
	}
}

func (s *Snapshot) removeSlice(nn types.NamespacedName) {
	if old, ok := s.EndpointSlices[nn]; ok {
		if svc, ok := SliceService(old); ok {
			s.slicesByService.remove(svc, old)
		}
	}
}

// DelegationsIn returns the TLSCertificateDelegations of one namespace, in
// no particular order.
func (s *Snapshot) DelegationsIn(ns string) iter.Seq[*switchyardv1.TLSCertificateDelegation] {
	return maps.Values(s.delegationsByNamespace[ns])
}

func (s *Snapshot) indexDelegation(d *switchyardv1.TLSCertificateDelegation) {
	m := s.delegationsByNamespace[d.Namespace]
	if m == nil {
		m = map[string]*switchyardv1.TLSCertificateDelegation{}
		s.delegationsByNamespace[d.Namespace] = m
	}
	m[d.Name] = d
}

func (s *Snapshot) removeDelegation(nn types.NamespacedName) {
	if m := s.delegationsByNamespace[nn.Namespace]; m != nil {
		delete(m, nn.Name)
		if len(m) == 0 {
			delete(s.delegationsByNamespace, nn.Namespace)
		}
	}
}
