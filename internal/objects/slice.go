package objects

import (
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// EndpointSlice is what a build reads of a discovery.k8s.io/v1
// EndpointSlice, which is how a Snapshot holds one. A cluster has one or
// more per Service, by the hundred thousand, and the Kubernetes type
// costs about 1.1 KB for a slice of three endpoints: its struct is 352
// bytes, the one-entry map that holds its kubernetes.io/service-name
// label about 336, an endpoint 96 plus a slice of addresses. This one
// costs about a third of that.
//
// Sources may hand a Snapshot either form: Upsert turns a Kubernetes
// slice into this one (CompactSlice). Like every object of a snapshot it
// is never changed once handed over; what it shares with other slices
// (port names, zones, node names) is shared as Compact shares them.
type EndpointSlice struct {
	Namespace, Name string
	// ResourceVersion is the API server's, for the Kubernetes source's
	// informers, which tell an update from a resync by it.
	ResourceVersion string
	// Service is the value of the kubernetes.io/service-name label, ""
	// when the slice has none: it then belongs to no Service.
	Service     string
	AddressType discoveryv1.AddressType
	Ports       []discoveryv1.EndpointPort
	Endpoints   []Endpoint
}

// Endpoint is what a build reads of an EndpointSlice's endpoint: its
// first address (consumers are told to use that one; Kubernetes sets no
// other), its conditions, zone and node name.
type Endpoint struct {
	Address        string
	Zone, NodeName *string
	// State holds what Conditions and HasAddress report. It is exported
	// only so that reflection (equality.Semantic, which the directory
	// source compares re-read objects with) can see it.
	State EndpointState
}

// EndpointState holds an endpoint's three optional conditions in two
// bits each (set, and true), and whether it has an address at all.
type EndpointState uint8

const (
	readySet EndpointState = 1 << iota
	ready
	servingSet
	serving
	terminatingSet
	terminating
	hasAddress
)

// NewEndpoint is the Endpoint of a Kubernetes endpoint.
func NewEndpoint(ep *discoveryv1.Endpoint) Endpoint {
	out := Endpoint{Zone: sharedString(ep.Zone), NodeName: sharedString(ep.NodeName)}
	if len(ep.Addresses) > 0 {
		out.Address, out.State = ep.Addresses[0], hasAddress
	}
	c := &ep.Conditions
	out.State |= condition(c.Ready, readySet, ready) | condition(c.Serving, servingSet, serving) |
		condition(c.Terminating, terminatingSet, terminating)
	return out
}

func condition(b *bool, set, on EndpointState) EndpointState {
	switch {
	case b == nil:
		return 0
	case *b:
		return set | on
	default:
		return set
	}
}

// HasAddress reports whether the endpoint had an address: one that has
// none is never used.
func (e *Endpoint) HasAddress() bool { return e.State&hasAddress != 0 }

// Conditions returns the endpoint's conditions, as the Kubernetes
// endpoint had them. The pointers are shared: never write through them.
func (e *Endpoint) Conditions() discoveryv1.EndpointConditions {
	return discoveryv1.EndpointConditions{
		Ready:       e.State.get(readySet, ready),
		Serving:     e.State.get(servingSet, serving),
		Terminating: e.State.get(terminatingSet, terminating),
	}
}

func (s EndpointState) get(set, on EndpointState) *bool {
	switch {
	case s&set == 0:
		return nil
	case s&on != 0:
		return &yes
	default:
		return &no
	}
}

// CompactSlice returns what a build reads of es, sharing what Compact
// shares. es is left as it was.
func CompactSlice(es *discoveryv1.EndpointSlice) *EndpointSlice {
	out := &EndpointSlice{
		Namespace:       Intern(es.Namespace),
		Name:            es.Name,
		ResourceVersion: es.ResourceVersion,
		Service:         es.Labels[ServiceNameLabel],
		AddressType:     discoveryv1.AddressType(Intern(string(es.AddressType))),
		Ports:           make([]discoveryv1.EndpointPort, len(es.Ports)),
		Endpoints:       make([]Endpoint, len(es.Endpoints)),
	}
	for i, p := range es.Ports {
		out.Ports[i] = discoveryv1.EndpointPort{
			Name: sharedString(p.Name), Protocol: sharedProtocol(p.Protocol),
			Port: sharedPort(p.Port), AppProtocol: sharedString(p.AppProtocol),
		}
	}
	for i := range es.Endpoints {
		out.Endpoints[i] = NewEndpoint(&es.Endpoints[i])
	}
	return out
}

// Kubernetes returns es as a Kubernetes EndpointSlice, for a caller that
// edits one (a test, a generator of changes). What CompactSlice dropped
// stays dropped.
func (es *EndpointSlice) Kubernetes() *discoveryv1.EndpointSlice {
	out := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
		ObjectMeta:  es.objectMeta(),
		AddressType: es.AddressType,
		Ports:       make([]discoveryv1.EndpointPort, len(es.Ports)),
		Endpoints:   make([]discoveryv1.Endpoint, len(es.Endpoints)),
	}
	for i, p := range es.Ports {
		out.Ports[i] = discoveryv1.EndpointPort{
			Name: clonePtr(p.Name), Protocol: clonePtr(p.Protocol),
			Port: clonePtr(p.Port), AppProtocol: clonePtr(p.AppProtocol),
		}
	}
	for i := range es.Endpoints {
		e := &es.Endpoints[i]
		ep := &out.Endpoints[i]
		if e.HasAddress() {
			ep.Addresses = []string{e.Address}
		}
		ep.Zone, ep.NodeName = clonePtr(e.Zone), clonePtr(e.NodeName)
		c := e.Conditions()
		ep.Conditions = discoveryv1.EndpointConditions{Ready: clonePtr(c.Ready), Serving: clonePtr(c.Serving), Terminating: clonePtr(c.Terminating)}
	}
	return out
}

// clonePtr returns a pointer of the caller's own to a copy of *p, so
// that editing the result never writes to what slices share.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// GetObjectMeta returns a copy of the slice's metadata, for meta.Accessor
// (the informers' key function): setting a field of it changes nothing.
func (es *EndpointSlice) GetObjectMeta() metav1.Object {
	m := es.objectMeta()
	return &m
}

func (es *EndpointSlice) objectMeta() metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: es.Namespace, Name: es.Name, ResourceVersion: es.ResourceVersion}
	if es.Service != "" {
		m.Labels = map[string]string{ServiceNameLabel: es.Service}
	}
	return m
}

// GetObjectKind reports discovery.k8s.io/v1 EndpointSlice, which every
// slice is: it holds no TypeMeta of its own.
func (*EndpointSlice) GetObjectKind() schema.ObjectKind {
	return fixedKind(discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"))
}

// DeepCopyObject copies the slice; what it shares stays shared.
func (es *EndpointSlice) DeepCopyObject() runtime.Object {
	out := *es
	out.Ports = slices.Clone(es.Ports)
	out.Endpoints = slices.Clone(es.Endpoints)
	return &out
}
