package render_test

import (
	"strings"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
)

func host(name, service, ip string, port int32) []runtime.Object {
	meta := metav1.ObjectMeta{Namespace: "shop", Name: name}
	sliceMeta := metav1.ObjectMeta{Namespace: "shop", Name: name + "-1", Labels: map[string]string{objects.ServiceNameLabel: service}}
	http := "http"
	return []runtime.Object{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: service}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: http, Port: 80}}}},
		&discoveryv1.EndpointSlice{ObjectMeta: sliceMeta, AddressType: discoveryv1.AddressTypeIPv4,
			Ports: []discoveryv1.EndpointPort{{Name: &http, Port: &port}}, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{ip}}}},
		&switchyardv1.HTTPProxy{ObjectMeta: meta, Spec: switchyardv1.HTTPProxySpec{
			VirtualHost: &switchyardv1.VirtualHost{Fqdn: name + ".example.com"},
			Routes:      []switchyardv1.Route{{Services: []switchyardv1.Service{{Name: service, Port: 80}}}},
		}},
	}
}

// TestRunGates renders a snapshot built directly, past any source's
// checks, with one host whose endpoint port no client accepts: render
// leaves out what serve withholds and reports the same condition.
func TestRunGates(t *testing.T) {
	snap := objects.NewSnapshot()
	for _, o := range append(host("good", "a", "10.0.0.1", 8080), host("bad", "z", "10.0.0.2", 70000)...) {
		if _, err := snap.Upsert(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, group := range render.Groups {
		out, err := render.Run(snap, render.Options{Translator: translator.DefaultOptions(), Group: group})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(out.Resources[resource.EndpointType]); n != 1 {
			t.Errorf("%s: %d load assignments rendered, want the good one", group, n)
		}
		var ms []proto.Message
		for _, list := range out.Resources {
			ms = append(ms, list...)
		}
		res, err := xdscheck.Collect(ms)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range xdscheck.CheckServed(group, res) {
			t.Errorf("%s: rendered something invalid: %v", group, err)
		}
		if out.Valid() {
			t.Errorf("%s: the output must not be valid", group)
		}
		found := false
		for _, st := range out.Statuses {
			switch st.Key.Name {
			case "bad":
				for _, c := range st.Errors {
					found = found || (c.Reason == "ResourceRejected" && strings.Contains(c.Message, "port_value: 70000"))
				}
			case "good":
				if st.State != switchyardv1.StatusValid {
					t.Errorf("%s: shop/good is %s: %v", group, st.State, st.Errors)
				}
			}
		}
		if !found {
			t.Errorf("%s: shop/bad does not say its port is 70000: %v", group, out.Statuses)
		}
	}
}
