package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
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
	"github.com/switchyard-dev/switchyard/internal/xdsres"
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

// uncheckedOptions are translator options under which the translator
// emits the endpoints clients reject, as a translator with a bug would:
// what the gate catches (translator.Options.KeepUnusableEndpoints).
func uncheckedOptions() translator.Options {
	opts := translator.DefaultOptions()
	opts.KeepUnusableEndpoints = true
	return opts
}

// TestRunLeavesOutUnusableEndpoints: an endpoint port no client accepts is
// left out by the translator, so render has nothing to withhold, and the
// proxy routing to it is valid with a warning that names the slice.
func TestRunLeavesOutUnusableEndpoints(t *testing.T) {
	snap := objects.NewSnapshot()
	for _, o := range append(host("good", "a", "10.0.0.1", 8080), host("bad", "z", "10.0.0.2", 70000)...) {
		if _, err := snap.Upsert(o); err != nil {
			t.Fatal(err)
		}
	}
	out, err := render.Run(snap, render.Options{Translator: translator.DefaultOptions(), Group: xdsres.GroupEnvoy})
	if err != nil {
		t.Fatal(err)
	}
	checkRendered(t, "envoy", out)
	if !out.Valid() {
		t.Errorf("nothing is withheld, so the output is valid: %v", out.Statuses)
	}
	warned := false
	for _, st := range out.Statuses {
		for _, w := range st.Warnings {
			warned = warned || (st.Key.Name == "bad" && w.Reason == "EndpointInvalid" && strings.Contains(w.Message, "70000 is not a port"))
		}
	}
	if !warned {
		t.Errorf("shop/bad does not warn of its port 70000: %v", out.Statuses)
	}
}

// TestRunGates renders a snapshot built directly, past any source's
// checks, with one host whose endpoint port no client accepts and a
// translator that emits it: render leaves out what serve withholds and
// reports the same condition.
func TestRunGates(t *testing.T) {
	snap := objects.NewSnapshot()
	for _, o := range append(host("good", "a", "10.0.0.1", 8080), host("bad", "z", "10.0.0.2", 70000)...) {
		if _, err := snap.Upsert(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, group := range xdsres.Names() {
		if group == string(xdsres.GroupMesh) {
			continue // no mesh without --mesh: nothing to gate
		}
		out, err := render.Run(snap, render.Options{Translator: uncheckedOptions(), Group: xdsres.Group(group)})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(out.Resources[resource.EndpointType]); n != 1 {
			t.Errorf("%s: %d load assignments rendered, want the good one", group, n)
		}
		checkRendered(t, group, out)
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

// TestRunGatesHTTPS renders two secure hosts, one of whose endpoints no
// client accepts, with a translator that emits it: the HTTPS listener is rendered, as served, with the
// good host's filter chain alone, and everything rendered passes.
func TestRunGatesHTTPS(t *testing.T) {
	dir := filepath.Join("..", "translator", "testdata", "certs")
	cert, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	snap := objects.NewSnapshot()
	objs := append(host("good", "a", "10.0.0.1", 8080), host("bad", "z", "10.0.0.999", 8080)...)
	objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": cert, "tls.key": key}})
	for _, o := range objs {
		if hp, ok := o.(*switchyardv1.HTTPProxy); ok {
			hp.Spec.VirtualHost.TLS = &switchyardv1.TLS{SecretName: "tls"}
		}
		if _, err := snap.Upsert(o); err != nil {
			t.Fatal(err)
		}
	}
	out, err := render.Run(snap, render.Options{Translator: uncheckedOptions(), Group: "envoy"})
	if err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, m := range out.Resources[resource.ListenerType] {
		if l := m.(*envoy_config_listener_v3.Listener); l.GetName() == translator.HTTPSListenerName {
			for _, fc := range l.GetFilterChains() {
				hosts = append(hosts, fc.GetFilterChainMatch().GetServerNames()...)
			}
		}
	}
	if len(hosts) != 1 || hosts[0] != "good.example.com" {
		t.Fatalf("want the HTTPS listener with good.example.com's chain alone, got %v", hosts)
	}
	checkRendered(t, "envoy", out)
}

// checkRendered checks a group's rendered resources as the gate checks
// what it serves.
func checkRendered(t *testing.T, group string, out *render.Output) {
	t.Helper()
	var ms []proto.Message
	for _, list := range out.Resources {
		ms = append(ms, list...)
	}
	res, err := xdscheck.Collect(ms)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range xdscheck.CheckServed(xdsres.Group(group), res) {
		t.Errorf("%s: rendered something invalid: %v", group, err)
	}
}
