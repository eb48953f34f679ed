package translator

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// Small constructors for test inputs, so that each table row reads as the
// objects it stands for.

func testCluster(name string, backends ...dag.Backend) *dag.Cluster {
	return &dag.Cluster{Name: name, Spec: dag.ClusterSpec{Backends: backends}}
}

func backend(ns, name string, port int32, weight, priority uint32) dag.Backend {
	return dag.Backend{
		Service:  types.NamespacedName{Namespace: ns, Name: name},
		Port:     port,
		Weight:   weight,
		Priority: priority,
	}
}

func newSnapshot(objs ...runtime.Object) *objects.Snapshot {
	s := objects.NewSnapshot()
	for _, o := range objs {
		if _, err := s.Upsert(o); err != nil {
			panic(err)
		}
	}
	return s
}

func service(ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Ports: ports},
	}
}

func annotated[T interface{ SetAnnotations(map[string]string) }](obj T, key, value string) T {
	obj.SetAnnotations(map[string]string{key: value})
	return obj
}

func servicePort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, Protocol: corev1.ProtocolTCP}
}

func node(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func slice(ns, svc, name string, port discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      name,
			Labels:    map[string]string{discoveryv1.LabelServiceName: svc},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{port},
		Endpoints:   eps,
	}
}

func withAddressType(es *discoveryv1.EndpointSlice, t discoveryv1.AddressType) *discoveryv1.EndpointSlice {
	es.AddressType = t
	return es
}

func namedPort(name string, port int32) discoveryv1.EndpointPort {
	tcp := corev1.ProtocolTCP
	p := discoveryv1.EndpointPort{Port: &port, Protocol: &tcp}
	if name != "" {
		p.Name = &name
	}
	return p
}

// ready is an endpoint whose Ready condition is true; zone "" leaves the
// zone unset.
func ready(addr, zone string) discoveryv1.Endpoint {
	return endpointWith(addr, zone, ptr(true), ptr(true), ptr(false))
}

// terminating is an endpoint that still serves while shutting down.
func terminating(addr, zone string) discoveryv1.Endpoint {
	return endpointWith(addr, zone, ptr(false), ptr(true), ptr(true))
}

// notReady is an endpoint that neither is ready nor serves.
func notReady(addr, zone string) discoveryv1.Endpoint {
	return endpointWith(addr, zone, ptr(false), ptr(false), ptr(false))
}

func endpointWith(addr, zone string, isReady, serving, term *bool) discoveryv1.Endpoint {
	ep := discoveryv1.Endpoint{
		Addresses:  []string{addr},
		Conditions: discoveryv1.EndpointConditions{Ready: isReady, Serving: serving, Terminating: term},
	}
	if zone != "" {
		ep.Zone = &zone
	}
	return ep
}

func onNode(ep discoveryv1.Endpoint, name string) discoveryv1.Endpoint {
	ep.NodeName = &name
	return ep
}

func ptr[T any](v T) *T { return &v }
