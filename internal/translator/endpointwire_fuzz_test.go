package translator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// FuzzAssignmentEncoding builds random backends, Services and
// EndpointSlices (shared addresses across Services, IPv4 and IPv6,
// terminating and drained endpoints, named ports, health ports,
// priorities, ports out of range kept with KeepUnusableEndpoints) and
// checks that the direct encoding of their load assignment is the
// messages' encoding byte for byte, in every group.
func FuzzAssignmentEncoding(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 1, 2, 0, 5, 7, 9, 11, 13, 2, 1, 0, 4, 4, 4, 4})
	f.Add([]byte{255, 128, 64, 32, 16, 8, 4, 2, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte("two services select the same pods in three zones, with ports out of range"))
	var buf AssignmentBuffers
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzInput{b: data}
		snap, spec, opts := in.build()
		if err := CheckAssignmentEncoding(&buf, "default/api/8080/da39a3ee5e", spec, snap, opts); err != nil {
			t.Fatal(err)
		}
	})
}

// fuzzBytes reads small numbers from the fuzzer's bytes, zeros once they
// run out.
type fuzzBytes []byte

func (b *fuzzBytes) next(n int) int {
	if len(*b) == 0 {
		return 0
	}
	v := int((*b)[0]) % n
	*b = (*b)[1:]
	return v
}

type fuzzInput struct{ b fuzzBytes }

func (in fuzzInput) build() (*objects.Snapshot, *dag.ClusterSpec, Options) {
	b := &in.b
	addresses := []string{"10.0.0.1", "10.0.0.2", "10.0.0.10", "192.168.1.1", "fd00::1", "fd00:0:0::2", "2001:db8::a", "not-an-ip", "10.0.0.1"}
	zones := []string{"", "zone-a", "zone-b", "zone-ü"}
	ports := []int32{8080, 9090, 70000, 1, 65535}
	opts := DefaultOptions()
	opts.KeepUnusableEndpoints = b.next(3) == 0
	if b.next(3) == 0 {
		opts.DrainZones = []string{"zone-b"}
	}
	objs := []runtime.Object{node("n0"), annotated(node("drained"), objects.DrainAnnotation, "true")}
	spec := &dag.ClusterSpec{}
	services := 1 + b.next(4)
	for s := range services {
		name := string(rune('a' + s))
		svc := service("ns", name, servicePort("http", 80), servicePort("", 81))
		if b.next(5) == 0 {
			svc = annotated(svc, objects.DrainAnnotation, "true")
		}
		objs = append(objs, svc)
		for k := range 1 + b.next(2) {
			portName := []string{"http", ""}[b.next(2)]
			var eps []discoveryv1.Endpoint
			for range b.next(7) {
				addr, zone := addresses[b.next(len(addresses))], zones[b.next(len(zones))]
				var ep discoveryv1.Endpoint
				switch b.next(4) {
				case 0:
					ep = terminating(addr, zone)
				case 1:
					ep = notReady(addr, zone)
				case 2:
					ep = endpointWith(addr, zone, nil, nil, nil)
				default:
					ep = ready(addr, zone)
				}
				if b.next(4) == 0 {
					ep = onNode(ep, []string{"n0", "drained"}[b.next(2)])
				}
				eps = append(eps, ep)
			}
			es := slice("ns", name, name+"-"+string(rune('0'+k)), namedPort(portName, ports[b.next(len(ports))]), eps...)
			es.Ports = append(es.Ports, namedPort("health", 9000+int32(b.next(3))))
			if b.next(3) == 0 {
				es = withAddressType(es, discoveryv1.AddressTypeIPv6)
			}
			objs = append(objs, es)
		}
		if b.next(4) == 0 {
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "health", Port: 82, Protocol: corev1.ProtocolTCP})
		}
	}
	for range 1 + b.next(5) {
		bk := dag.Backend{
			Service:  types.NamespacedName{Namespace: "ns", Name: string(rune('a' + b.next(services+1)))},
			Port:     []int32{80, 81, 83}[b.next(3)],
			Weight:   uint32(1 + b.next(200)),
			Priority: uint32(b.next(3)),
		}
		if b.next(3) == 0 {
			bk.HealthPort = 82
		}
		spec.Backends = append(spec.Backends, bk)
	}
	return newSnapshot(objs...), spec, opts
}
