package translator

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// validateAll checks every resource the way Envoy would before using it:
// ValidateAll on the resource and, since protoc-gen-validate does not look
// inside Any, on every typed_config it carries, each of which must also
// unmarshal.
func validateAll(t *testing.T, r *Resources) {
	t.Helper()
	for _, err := range validationErrors(r) {
		t.Error(err)
	}
}

// validationErrors is validateAll's work, returned so that the check itself
// can be tested.
func validationErrors(r *Resources) []error {
	msgs := r.All()
	var errs []error
	for _, m := range msgs {
		errs = append(errs, validateMessage(m)...)
	}
	return errs
}

// validateMessage validates one message and every Any nested in it.
func validateMessage(m proto.Message) []error {
	name := m.ProtoReflect().Descriptor().FullName()
	var errs []error
	if v, ok := m.(interface{ ValidateAll() error }); ok {
		if err := v.ValidateAll(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	} else {
		errs = append(errs, fmt.Errorf("%s has no ValidateAll", name))
	}
	return append(errs, walkAnys(m.ProtoReflect())...)
}

// walkAnys finds the Any fields of a message, at any depth, and validates
// what they hold.
func walkAnys(m protoreflect.Message) []error {
	if a, ok := m.Interface().(*anypb.Any); ok {
		inner, err := a.UnmarshalNew()
		if err != nil {
			return []error{fmt.Errorf("typed_config %s: %w", a.GetTypeUrl(), err)}
		}
		return validateMessage(inner)
	}
	var errs []error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				errs = append(errs, walkAnys(v.List().Get(i).Message())...)
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				errs = append(errs, walkAnys(mv.Message())...)
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			errs = append(errs, walkAnys(v.Message())...)
		}
		return true
	})
	return errs
}

// TestValidationErrorsLooksInsideAny makes sure the helper every other
// test relies on catches an invalid message nested in a typed_config, and
// a typed_config that does not unmarshal.
func TestValidationErrorsLooksInsideAny(t *testing.T) {
	bad := HTTPRouteConfig(&dag.VirtualHost{FQDN: "a.com", Routes: []*dag.Route{{DirectResponse: &dag.DirectResponse{StatusCode: 99}}}})
	if errs := validationErrors(&Resources{Routes: []*envoy_config_route_v3.RouteConfiguration{bad}}); len(errs) == 0 {
		t.Error("status 99 passed validation")
	}

	l := HTTPListener(DefaultOptions(), nil, nil)
	hcm := &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager{}
	l.FilterChains[0].Filters[0].ConfigType = &envoy_config_listener_v3.Filter_TypedConfig{TypedConfig: toAny(hcm)}
	if errs := validationErrors(&Resources{Listeners: []*envoy_config_listener_v3.Listener{l}}); len(errs) == 0 {
		t.Error("an HCM without stat_prefix inside an Any passed validation")
	}

	l.FilterChains[0].Filters[0].ConfigType = &envoy_config_listener_v3.Filter_TypedConfig{
		TypedConfig: &anypb.Any{TypeUrl: "type.googleapis.com/no.such.Type"},
	}
	if errs := validationErrors(&Resources{Listeners: []*envoy_config_listener_v3.Listener{l}}); len(errs) == 0 {
		t.Error("an unknown typed_config passed validation")
	}
}

// diff compares protos (or structs of them) field by field.
func diff(want, got any) string { return cmp.Diff(want, got, protocmp.Transform()) }

func dur(d time.Duration) *time.Duration { return &d }

// fullDAG exercises every feature at once: plain and secure hosts, the
// plain-HTTP copy of a secure host, authorization, client certificates,
// TCP proxying with and without termination, and clusters with endpoints.
func fullDAG() (*dag.DAG, *objects.Snapshot) {
	web := testCluster("web", backend("default", "web", 80, 1, 0))
	api := testCluster("api", backend("default", "api", 8080, 3, 0), backend("default", "api-v2", 8080, 1, 0))
	auth := testCluster("auth", backend("auth", "authz", 9000, 1, 0))
	auth.Spec.Protocol = "h2c"
	db := testCluster("db", backend("default", "db", 5432, 1, 0))
	cert := &dag.Secret{Name: "default/cert", Kind: dag.SecretTLS, Cert: []byte("CERT"), Key: []byte("KEY")}
	ca := &dag.Secret{Name: "default/ca/ca", Kind: dag.SecretCA, Cert: []byte("CA")}

	secureRoute := &dag.Route{PathMatch: dag.PathMatch{Value: "/"}, Forward: &dag.Forward{Cluster: api}, HTTPSRedirect: true, AuthContext: map[string]string{"b": "2", "a": "1"}}
	open := &dag.Route{PathMatch: dag.PathMatch{Value: "/healthz"}, Forward: &dag.Forward{Cluster: api}, AuthDisabled: true}
	d := &dag.DAG{
		VirtualHosts: []*dag.VirtualHost{
			{FQDN: "api.example.com", Routes: []*dag.Route{open, secureRoute}},
			{FQDN: "www.example.com", Routes: []*dag.Route{{PathMatch: dag.PathMatch{Value: "/"}, Forward: &dag.Forward{Cluster: web}}}},
		},
		SecureVirtualHosts: []*dag.SecureVirtualHost{
			{
				VirtualHost: dag.VirtualHost{FQDN: "api.example.com", Routes: []*dag.Route{open, secureRoute}},
				Secret:      cert, ClientCA: ca,
				Authorization: &dag.Authorization{Cluster: auth, ResponseTimeout: time.Second, Context: map[string]string{"z": "26", "y": "25"}},
			},
			{VirtualHost: dag.VirtualHost{FQDN: "db.example.com"}, Secret: cert, TCPProxy: &dag.TCPProxy{Cluster: db}},
			{VirtualHost: dag.VirtualHost{FQDN: "raw.example.com"}, Passthrough: true, TCPProxy: &dag.TCPProxy{Cluster: db}},
		},
		Clusters: []*dag.Cluster{web, api, auth, db},
		Secrets:  []*dag.Secret{cert, ca},
	}
	snap := newSnapshot(
		service("default", "web", servicePort("http", 80)),
		slice("default", "web", "web-1", namedPort("http", 8080), ready("10.0.0.1", "a"), ready("10.0.0.2", "b")),
		service("default", "api", servicePort("", 8080)),
		slice("default", "api", "api-1", namedPort("", 8080), ready("10.0.1.1", "a"), ready("10.0.1.2", "a"), ready("10.0.1.3", "b")),
		service("default", "api-v2", servicePort("", 8080)),
		slice("default", "api-v2", "api-v2-1", namedPort("", 8080), ready("10.0.2.1", "b")),
		service("auth", "authz", servicePort("grpc", 9000)),
		slice("auth", "authz", "authz-1", namedPort("grpc", 9000), ready("10.0.3.1", "")),
		service("default", "db", servicePort("pg", 5432)),
		slice("default", "db", "db-1", namedPort("pg", 5432), ready("10.0.4.1", "a")),
	)
	return d, snap
}

func TestEnvoyFullIsValidAndSorted(t *testing.T) {
	d, snap := fullDAG()
	res := Envoy(d, snap, DefaultOptions())
	validateAll(t, res)

	names := func(ms ...interface{ GetName() string }) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.GetName())
		}
		return out
	}
	var got []string
	for _, l := range res.Listeners {
		got = append(got, names(l)...)
	}
	for _, s := range res.ScopedRoutes {
		got = append(got, names(s)...)
	}
	for _, r := range res.Routes {
		got = append(got, names(r)...)
	}
	for _, c := range res.Clusters {
		got = append(got, names(c)...)
	}
	for _, e := range res.Endpoints {
		got = append(got, e.GetClusterName())
	}
	for _, s := range res.Secrets {
		got = append(got, names(s)...)
	}
	want := []string{
		"ingress_http", "ingress_https",
		"http/api.example.com", "http/www.example.com",
		// db and raw forward TCP: no route configuration.
		"http/api.example.com", "http/www.example.com", "https/api.example.com",
		"api", "auth", "db", "web",
		"api", "auth", "db", "web",
		"default/ca/ca", "default/cert",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("resource names (-want +got):\n%s", d)
	}
}

// TestEnvoyDeterministic translates the same input twice and compares the
// deterministic wire bytes: maps inside typed_config Anys (ext_authz
// context extensions) must not change the bytes from run to run.
func TestEnvoyDeterministic(t *testing.T) {
	d, snap := fullDAG()
	first := wireBytes(t, Envoy(d, snap, DefaultOptions()))
	for range 20 {
		again := wireBytes(t, Envoy(d, snap, DefaultOptions()))
		if len(again) != len(first) {
			t.Fatalf("got %d resources, then %d", len(first), len(again))
		}
		for i := range first {
			if !bytes.Equal(first[i], again[i]) {
				t.Fatalf("resource %d differs between runs", i)
			}
		}
	}
}

func TestEnvoyEmpty(t *testing.T) {
	for name, d := range map[string]*dag.DAG{"nil": nil, "empty": {}} {
		t.Run(name, func(t *testing.T) {
			res := Envoy(d, nil, DefaultOptions())
			validateAll(t, res)
			want := &Resources{Listeners: res.Listeners}
			if len(res.Listeners) != 1 || res.Listeners[0].GetName() != HTTPListenerName {
				t.Fatalf("want only %s, got %v", HTTPListenerName, res.Listeners)
			}
			if d := diff(want, res); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestEnvoyDropsDuplicateHosts: a duplicate FQDN would make Envoy reject
// the whole SRDS update, or the HTTPS listener; the first one wins.
func TestEnvoyDropsDuplicateHosts(t *testing.T) {
	c := testCluster("c")
	r := []*dag.Route{{PathMatch: dag.PathMatch{Value: "/"}, Forward: &dag.Forward{Cluster: c}}}
	cert := &dag.Secret{Name: "ns/cert"}
	d := &dag.DAG{
		VirtualHosts: []*dag.VirtualHost{{FQDN: "a.com", Routes: r}, {FQDN: "a.com"}},
		SecureVirtualHosts: []*dag.SecureVirtualHost{
			{VirtualHost: dag.VirtualHost{FQDN: "a.com", Routes: r}, Secret: cert},
			{VirtualHost: dag.VirtualHost{FQDN: "a.com"}, Secret: cert},
		},
		Clusters: []*dag.Cluster{c},
	}
	res := Envoy(d, nil, DefaultOptions())
	validateAll(t, res)
	if n := len(res.ScopedRoutes); n != 1 {
		t.Errorf("got %d scopes, want 1", n)
	}
	if n := len(res.Routes); n != 2 {
		t.Errorf("got %d route configurations, want 2", n)
	}
	if got := res.Routes[0].GetVirtualHosts()[0].GetRoutes(); len(got) != 1 {
		t.Errorf("the first a.com should win, got routes %v", got)
	}
	if n := len(res.Listeners[1].GetFilterChains()); n != 1 {
		t.Errorf("got %d filter chains, want 1", n)
	}
}

func TestDefaultOptions(t *testing.T) {
	want := Options{ListenAddress: "0.0.0.0", HTTPPort: 8080, HTTPSPort: 8443, ConnectTimeout: 2 * time.Second}
	if d := cmp.Diff(want, DefaultOptions()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
