package translator

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// checkGRPC fails the test on anything ValidateAll or grpc-go would reject.
func checkGRPC(t *testing.T, r *Resources) {
	t.Helper()
	validateAll(t, r)
	for _, err := range grpcProblems(r) {
		t.Error(err)
	}
}

func grpcDirect(status uint32, body string) *envoy_config_route_v3.Route_DirectResponse {
	return &envoy_config_route_v3.Route_DirectResponse{DirectResponse: grpcDirectResponse(status, body)}
}

func regexMatch(re string) *envoy_config_route_v3.RouteMatch {
	return &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_SafeRegex{
		SafeRegex: &envoy_type_matcher_v3.RegexMatcher{Regex: re},
	}}
}

func TestGRPCRoute(t *testing.T) {
	tlsCluster := testCluster("secure")
	tlsCluster.Spec.UpstreamTLS = &dag.UpstreamTLS{CASecret: "ns/ca/ca", SubjectName: "backend.internal"}
	tests := map[string]struct {
		in    *dag.Route
		authz bool
		want  *envoy_config_route_v3.Route
	}{
		"a plain prefix stays a prefix": {
			in:   forward(nil),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: toC(nil)},
		},
		"a segment prefix, which gRPC NACKs, becomes a full-match regex": {
			in:   forward(func(r *dag.Route) { r.PathMatch = dag.PathMatch{Value: "/pkg.Svc"} }),
			want: &envoy_config_route_v3.Route{Match: regexMatch(`/pkg\.Svc(?:/.*)?`), Action: toC(nil)},
		},
		"the response timeout moves to max_stream_duration": {
			in: forward(func(r *dag.Route) { r.ResponseTimeout = dur(5 * time.Second) }),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: toC(func(a *envoy_config_route_v3.RouteAction) {
				a.MaxStreamDuration = &envoy_config_route_v3.RouteAction_MaxStreamDuration{MaxStreamDuration: durationpb.New(5 * time.Second)}
			})},
		},
		"a zero response timeout stays no timeout": {
			in: forward(func(r *dag.Route) { r.ResponseTimeout = dur(0) }),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: toC(func(a *envoy_config_route_v3.RouteAction) {
				a.MaxStreamDuration = &envoy_config_route_v3.RouteAction_MaxStreamDuration{MaxStreamDuration: durationpb.New(0)}
			})},
		},
		"mirrors are dropped": {
			in: forward(func(r *dag.Route) {
				r.Forward.Mirrors = []dag.Mirror{{Cluster: testCluster("m"), Percent: 50}}
			}),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: toC(nil)},
		},
		"a retry policy keeps a positive count": {
			in: forward(func(r *dag.Route) { r.Retry = &dag.Retry{Count: 2, RetryOn: []string{"unavailable"}} }),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: toC(func(a *envoy_config_route_v3.RouteAction) {
				a.RetryPolicy = &envoy_config_route_v3.RetryPolicy{RetryOn: "unavailable", NumRetries: wrapperspb.UInt32(2)}
			})},
		},
		"a route behind authorization answers 403": {
			in:    forward(func(r *dag.Route) { r.AuthContext = map[string]string{"team": "a"} }),
			authz: true,
			want:  &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: grpcDirect(403, grpcAuthzBody)},
		},
		"a route behind authorization without a context answers 403": {
			in:    forward(func(r *dag.Route) { r.PathMatch = dag.PathMatch{Value: "/a"} }),
			authz: true,
			want:  &envoy_config_route_v3.Route{Match: regexMatch(`/a(?:/.*)?`), Action: grpcDirect(403, grpcAuthzBody)},
		},
		"a redirect behind authorization answers 403 too": {
			in:    &dag.Route{PathMatch: dag.PathMatch{Value: "/"}, Redirect: &dag.Redirect{Hostname: "b.com", StatusCode: 301}},
			authz: true,
			want:  &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: grpcDirect(403, grpcAuthzBody)},
		},
		"a route that disables authorization forwards, without ExtAuthzPerRoute": {
			in:    forward(func(r *dag.Route) { r.AuthDisabled = true }),
			authz: true,
			want:  &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: toC(nil)},
		},
		"a route to backends that need upstream validation answers 503": {
			in:   forward(func(r *dag.Route) { r.Forward.Cluster = tlsCluster }),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: grpcDirect(503, grpcTLSBody)},
		},
		"a weighted route with one validated backend answers 503": {
			in: forward(func(r *dag.Route) {
				r.Forward.Cluster = nil
				r.Forward.Weighted = []dag.WeightedCluster{{Cluster: testCluster("c"), Weight: 1}, {Cluster: tlsCluster, Weight: 1}}
			}),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: grpcDirect(503, grpcTLSBody)},
		},
		"query-parameter conditions never match an RPC: left out": {
			in: forward(func(r *dag.Route) {
				r.QueryParamMatches = []dag.QueryParamMatch{{Name: "v", Kind: dag.MatchExact, Value: "2"}}
			}),
			want: nil,
		},
		"per-service headers keep weighted_clusters": {
			in: forward(func(r *dag.Route) {
				r.Forward.Cluster = nil
				r.Forward.Weighted = []dag.WeightedCluster{
					{Cluster: testCluster("a"), Weight: 90, RequestHeaders: &dag.HeadersPolicy{Set: []dag.HeaderValue{{Name: "x-v", Value: "1"}}}},
					{Cluster: testCluster("b"), Weight: 10},
				}
			}),
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: &envoy_config_route_v3.Route_Route{Route: &envoy_config_route_v3.RouteAction{
				ClusterSpecifier: &envoy_config_route_v3.RouteAction_WeightedClusters{WeightedClusters: &envoy_config_route_v3.WeightedCluster{
					Clusters: []*envoy_config_route_v3.WeightedCluster_ClusterWeight{
						{Name: "a", Weight: wrapperspb.UInt32(90), RequestHeadersToAdd: []*envoy_config_core_v3.HeaderValueOption{setHeader("x-v", "1")}},
						{Name: "b", Weight: wrapperspb.UInt32(10)},
					},
				}},
				HashPolicy: []*envoy_config_route_v3.RouteAction_HashPolicy{},
			}}},
		},
		"the plain-HTTP copy of a secure route redirects": {
			in: &dag.Route{PathMatch: dag.PathMatch{Value: "/"}, HTTPSRedirect: true},
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: &envoy_config_route_v3.Route_Redirect{
				Redirect: &envoy_config_route_v3.RedirectAction{
					SchemeRewriteSpecifier: &envoy_config_route_v3.RedirectAction_HttpsRedirect{HttpsRedirect: true},
				},
			}},
		},
		"the DAG's 503 for an invalid route is kept": {
			in: &dag.Route{PathMatch: dag.PathMatch{Value: "/"}, DirectResponse: &dag.DirectResponse{StatusCode: 503, Body: "invalid"}},
			want: &envoy_config_route_v3.Route{Match: prefixMatch("/"), Action: &envoy_config_route_v3.Route_DirectResponse{
				DirectResponse: directResponse(&dag.DirectResponse{StatusCode: 503, Body: "invalid"}),
			}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := (*Owners)(nil).grpcRoute(tt.in, tt.authz)
			if d := diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestSegmentPrefixRegex checks that the regex gRPC gets matches exactly
// the paths Envoy's path_separated_prefix matches, under gRPC's own
// full-match compilation (matcher.CompileSafeRegex: "^(?:re)$").
func TestSegmentPrefixRegex(t *testing.T) {
	paths := []string{"/", "/a", "/a/", "/a/b", "/ab", "/a.b", "/axb", "/a.b/c", "/pkg.Svc/Method", "/pkg.Svcx/Method", "/a+", "/a+/x", "/aa+"}
	for _, prefix := range []string{"/a", "/a.b", "/pkg.Svc", "/a+"} {
		re := regexp.MustCompile("^(?:" + segmentPrefixRegex(prefix) + ")$")
		for _, p := range paths {
			want := p == prefix || strings.HasPrefix(p, prefix+"/")
			if got := re.MatchString(p); got != want {
				t.Errorf("prefix %q, path %q: regex matches %v, want %v", prefix, p, got, want)
			}
		}
	}
}

func TestGRPCRetryPolicy(t *testing.T) {
	backOff := func(base, maxI *durationpb.Duration) *envoy_config_route_v3.RetryPolicy_RetryBackOff {
		return &envoy_config_route_v3.RetryPolicy_RetryBackOff{BaseInterval: base, MaxInterval: maxI}
	}
	tests := map[string]struct {
		in, want *envoy_config_route_v3.RetryPolicy
	}{
		"none":                        {},
		"num_retries 0 drops it":      {in: &envoy_config_route_v3.RetryPolicy{RetryOn: "5xx", NumRetries: wrapperspb.UInt32(0)}},
		"unset num_retries is kept":   {in: &envoy_config_route_v3.RetryPolicy{RetryOn: "5xx"}, want: &envoy_config_route_v3.RetryPolicy{RetryOn: "5xx"}},
		"positive num_retries stays":  {in: &envoy_config_route_v3.RetryPolicy{NumRetries: wrapperspb.UInt32(3)}, want: &envoy_config_route_v3.RetryPolicy{NumRetries: wrapperspb.UInt32(3)}},
		"a zero base drops back-off":  {in: &envoy_config_route_v3.RetryPolicy{RetryBackOff: backOff(durationpb.New(0), durationpb.New(time.Second))}, want: &envoy_config_route_v3.RetryPolicy{}},
		"a missing base drops it":     {in: &envoy_config_route_v3.RetryPolicy{RetryBackOff: backOff(nil, durationpb.New(time.Second))}, want: &envoy_config_route_v3.RetryPolicy{}},
		"a negative base drops it":    {in: &envoy_config_route_v3.RetryPolicy{RetryBackOff: backOff(durationpb.New(-time.Second), nil)}, want: &envoy_config_route_v3.RetryPolicy{}},
		"a zero max is dropped alone": {in: &envoy_config_route_v3.RetryPolicy{RetryBackOff: backOff(durationpb.New(time.Second), durationpb.New(0))}, want: &envoy_config_route_v3.RetryPolicy{RetryBackOff: backOff(durationpb.New(time.Second), nil)}},
		"a valid back-off stays":      {in: &envoy_config_route_v3.RetryPolicy{RetryBackOff: backOff(durationpb.New(time.Second), durationpb.New(2*time.Second))}, want: &envoy_config_route_v3.RetryPolicy{RetryBackOff: backOff(durationpb.New(time.Second), durationpb.New(2*time.Second))}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := grpcRetryPolicy(tt.in)
			if d := diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if errs := retryProblems(name, got); len(errs) > 0 {
				t.Errorf("still NACKed: %v", errs)
			}
		})
	}
}

// TestGRPCActionStripsWhatGRPCRejects feeds grpcAction an action with
// every field gRPC NACKs or ignores in a misleading way, as no DAG route
// would produce it today.
func TestGRPCActionStripsWhatGRPCRejects(t *testing.T) {
	a := &envoy_config_route_v3.RouteAction{
		ClusterSpecifier: &envoy_config_route_v3.RouteAction_WeightedClusters{WeightedClusters: &envoy_config_route_v3.WeightedCluster{
			Clusters: []*envoy_config_route_v3.WeightedCluster_ClusterWeight{
				{Name: "zero", Weight: wrapperspb.UInt32(0)},
				{Name: "a", Weight: wrapperspb.UInt32(1), TypedPerFilterConfig: extAuthzPerRoute(&dag.Route{AuthDisabled: true})},
			},
		}},
		Timeout:               durationpb.New(time.Second),
		RequestMirrorPolicies: mirrorPolicies([]dag.Mirror{{Cluster: testCluster("m"), Percent: 10}}),
		RetryPolicy:           &envoy_config_route_v3.RetryPolicy{NumRetries: wrapperspb.UInt32(0)},
	}
	if !grpcAction(a) {
		t.Fatal("grpcAction found no backend")
	}
	want := &envoy_config_route_v3.RouteAction{
		ClusterSpecifier: &envoy_config_route_v3.RouteAction_WeightedClusters{WeightedClusters: &envoy_config_route_v3.WeightedCluster{
			Clusters: []*envoy_config_route_v3.WeightedCluster_ClusterWeight{{Name: "a", Weight: wrapperspb.UInt32(1)}},
		}},
		MaxStreamDuration: &envoy_config_route_v3.RouteAction_MaxStreamDuration{MaxStreamDuration: durationpb.New(time.Second)},
	}
	if d := diff(want, a); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}

	allZero := &envoy_config_route_v3.RouteAction{
		ClusterSpecifier: &envoy_config_route_v3.RouteAction_WeightedClusters{WeightedClusters: &envoy_config_route_v3.WeightedCluster{
			Clusters: []*envoy_config_route_v3.WeightedCluster_ClusterWeight{{Name: "zero", Weight: wrapperspb.UInt32(0)}},
		}},
	}
	if grpcAction(allZero) {
		t.Error("a weighted_clusters total of 0, which gRPC NACKs, was kept")
	}
}

func TestGRPCListeners(t *testing.T) {
	routes := []*dag.Route{forward(nil)}
	redirects := []*dag.Route{{PathMatch: dag.PathMatch{Value: "/"}, HTTPSRedirect: true}}
	secure := func(mod func(*dag.SecureVirtualHost)) *dag.SecureVirtualHost {
		s := &dag.SecureVirtualHost{VirtualHost: dag.VirtualHost{FQDN: "a.com", Routes: routes}, Secret: &dag.Secret{Name: "ns/cert"}}
		if mod != nil {
			mod(s)
		}
		return s
	}
	tests := map[string]struct {
		host GRPCHost
		want []string
	}{
		"plain only": {
			host: GRPCHost{FQDN: "a.com", Plain: &dag.VirtualHost{FQDN: "a.com", Routes: routes}},
			want: []string{"a.com", "a.com:80"},
		},
		"TLS with https redirects on plain HTTP": {
			host: GRPCHost{FQDN: "a.com", Plain: &dag.VirtualHost{FQDN: "a.com", Routes: redirects}, Secure: secure(nil)},
			want: []string{"a.com", "a.com:443", "a.com:80"},
		},
		"TLS only": {
			host: GRPCHost{FQDN: "a.com", Secure: secure(nil)},
			want: []string{"a.com", "a.com:443"},
		},
		"a TCP proxy has no routes and no listener": {
			host: GRPCHost{FQDN: "a.com", Secure: secure(func(s *dag.SecureVirtualHost) {
				s.Routes = nil
				s.TCPProxy = &dag.TCPProxy{Cluster: testCluster("c")}
			})},
		},
		"a passthrough host has no listener": {
			host: GRPCHost{FQDN: "a.com", Secure: secure(func(s *dag.SecureVirtualHost) {
				s.Routes, s.Secret, s.Passthrough = nil, nil, true
				s.TCPProxy = &dag.TCPProxy{Cluster: testCluster("c")}
			})},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			ls := GRPCListeners(tt.host)
			var got []string
			for _, l := range ls {
				got = append(got, l.GetName())
				hcm := &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager{}
				if err := l.GetApiListener().GetApiListener().UnmarshalTo(hcm); err != nil {
					t.Fatal(err)
				}
				if n := hcm.GetRds().GetRouteConfigName(); n != "grpc/a.com" {
					t.Errorf("listener %s names route configuration %q", l.GetName(), n)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("listener names (-want +got):\n%s", d)
			}
			rc := GRPCRouteConfig(tt.host)
			res := &Resources{Listeners: ls, Routes: nonNil(rc)}
			for _, c := range GRPCClusters(tt.host) {
				res.Clusters = append(res.Clusters, GRPCCluster(c, DefaultOptions()))
				res.Endpoints = append(res.Endpoints, GRPCLoadAssignment(c.Name, &c.Spec, nil, DefaultOptions()))
			}
			checkGRPC(t, res)
			if (rc == nil) != (len(tt.want) == 0) {
				t.Errorf("route configuration %v with listeners %v", rc, tt.want)
			}
		})
	}
}

func nonNil(rc *envoy_config_route_v3.RouteConfiguration) []*envoy_config_route_v3.RouteConfiguration {
	if rc == nil {
		return nil
	}
	return []*envoy_config_route_v3.RouteConfiguration{rc}
}

func TestGRPCCluster(t *testing.T) {
	tests := map[string]struct {
		lb, protocol string
		want         envoy_config_cluster_v3.Cluster_LbPolicy
	}{
		"round robin":                     {lb: dag.LBRoundRobin, want: envoy_config_cluster_v3.Cluster_ROUND_ROBIN},
		"random, which gRPC NACKs":        {lb: dag.LBRandom, want: envoy_config_cluster_v3.Cluster_ROUND_ROBIN},
		"least request":                   {lb: dag.LBWeightedLeastRequest, want: envoy_config_cluster_v3.Cluster_LEAST_REQUEST},
		"cookie hashes":                   {lb: dag.LBCookie, want: envoy_config_cluster_v3.Cluster_RING_HASH},
		"h2 loses Envoy's TLS socket":     {protocol: "h2", want: envoy_config_cluster_v3.Cluster_ROUND_ROBIN},
		"tls loses Envoy's TLS socket":    {protocol: "tls", want: envoy_config_cluster_v3.Cluster_ROUND_ROBIN},
		"h2c keeps its protocol options":  {protocol: "h2c", want: envoy_config_cluster_v3.Cluster_ROUND_ROBIN},
		"random h2 gets both adjustments": {lb: dag.LBRandom, protocol: "h2", want: envoy_config_cluster_v3.Cluster_ROUND_ROBIN},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := testCluster("c", backend("ns", "s", 80, 1, 0))
			c.Spec.LoadBalancer, c.Spec.Protocol = tt.lb, tt.protocol
			got := GRPCCluster(c, DefaultOptions())
			if got.GetLbPolicy() != tt.want {
				t.Errorf("lb_policy %v, want %v", got.GetLbPolicy(), tt.want)
			}
			if got.GetTransportSocket() != nil {
				t.Error("transport_socket set")
			}
			envoy := Cluster(c, DefaultOptions())
			envoy.LbPolicy, envoy.TransportSocket = tt.want, nil
			if d := diff(envoy, got); d != "" {
				t.Errorf("differs from Envoy's cluster beyond lb_policy and transport_socket (-want +got):\n%s", d)
			}
			for _, err := range append(grpcClusterProblems(got), validateMessage(got)...) {
				t.Error(err)
			}
		})
	}
}

func TestGRPCLoadAssignment(t *testing.T) {
	tests := map[string]struct {
		backends []dag.Backend
		objects  []runtime.Object
		want     []*envoy_config_endpoint_v3.LocalityLbEndpoints
	}{
		"two Services selecting the same pods: the second keeps the share of its own pods": {
			backends: []dag.Backend{backend("ns", "a", 80, 3, 0), backend("ns", "b", 80, 1, 0)},
			objects: []runtime.Object{
				service("ns", "a", servicePort("http", 80)),
				slice("ns", "a", "a-1", namedPort("http", 8080), ready("10.0.0.1", "z1"), ready("10.0.0.2", "z1")),
				service("ns", "b", servicePort("http", 80)),
				slice("ns", "b", "b-1", namedPort("http", 8080), ready("10.0.0.2", "z1"), ready("10.0.0.3", "z1")),
			},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				// K = 2000 (a 6000, b 2000); b keeps one of its two
				// healthy endpoints, so half its weight.
				loc("z1", "ns/a", 0, 6000, lbe("10.0.0.1", 8080, healthy), lbe("10.0.0.2", 8080, healthy)),
				loc("z1", "ns/b", 0, 1000, lbe("10.0.0.3", 8080, healthy)),
			},
		},
		"a standby sharing pods with the primary: the primary keeps them": {
			backends: []dag.Backend{backend("ns", "a", 80, 1, 0), backend("ns", "b", 80, 1, 1)},
			objects: []runtime.Object{
				service("ns", "a", servicePort("http", 80)),
				slice("ns", "a", "a-1", namedPort("http", 8080), ready("10.0.0.1", "z1")),
				service("ns", "b", servicePort("http", 80)),
				slice("ns", "b", "b-1", namedPort("http", 8080), ready("10.0.0.1", "z1")),
			},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("z1", "ns/a", 0, 1000, lbe("10.0.0.1", 8080, healthy)),
				loc("z1", "ns/b", 1, 1),
			},
		},
		"different ports of one address are different endpoints": {
			backends: []dag.Backend{backend("ns", "a", 80, 1, 0), backend("ns", "a", 81, 1, 0)},
			objects: []runtime.Object{
				service("ns", "a", servicePort("http", 80), servicePort("admin", 81)),
				slice("ns", "a", "a-1", namedPort("http", 8080), ready("10.0.0.1", "z1")),
				slice("ns", "a", "a-2", namedPort("admin", 8081), ready("10.0.0.1", "z1")),
			},
			want: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
				loc("z1", "ns/a:80", 0, 1000, lbe("10.0.0.1", 8080, healthy)),
				loc("z1", "ns/a:81", 0, 1000, lbe("10.0.0.1", 8081, healthy)),
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			spec := &dag.ClusterSpec{Backends: tt.backends}
			snap := newSnapshot(tt.objects...)
			got := GRPCLoadAssignment("c", spec, snap, DefaultOptions())
			want := &envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: "c", Endpoints: tt.want}
			if d := diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			for _, err := range append(grpcEndpointProblems(got), validateMessage(got)...) {
				t.Error(err)
			}

			// The same from Envoy's assignment, which must stay as it was.
			envoy := LoadAssignment("c", spec, snap, DefaultOptions())
			before := proto.Clone(envoy)
			if d := diff(want, GRPCLoadAssignmentOf(envoy)); d != "" {
				t.Errorf("GRPCLoadAssignmentOf (-want +got):\n%s", d)
			}
			if d := diff(before, envoy); d != "" {
				t.Errorf("GRPCLoadAssignmentOf changed Envoy's assignment (-before +after):\n%s", d)
			}
		})
	}
}

// TestDedupeEndpoints covers shapes LoadAssignment does not produce today:
// a locality listed twice in one priority, and localities out of priority
// order.
func TestDedupeEndpoints(t *testing.T) {
	cla := &envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: "c", Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
		loc("z1", "ns/b", 1, 5, lbe("10.0.0.1", 80, healthy), lbe("10.0.0.9", 80, healthy)),
		loc("z1", "ns/a", 0, 1, lbe("10.0.0.1", 80, healthy)),
		loc("z1", "ns/a", 0, 2, lbe("10.0.0.2", 80, healthy)),
		loc("z1", "ns/a", 1, 3, lbe("10.0.0.3", 80, draining)),
	}}
	dedupeEndpoints(cla)
	want := &envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: "c", Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{
		loc("z1", "ns/a", 0, 1, lbe("10.0.0.1", 80, healthy)),
		// One of two healthy endpoints left: half the weight, rounded down.
		loc("z1", "ns/b", 1, 2, lbe("10.0.0.9", 80, healthy)),
		// No healthy endpoint to begin with: the weight stays.
		loc("z1", "ns/a", 1, 3, lbe("10.0.0.3", 80, draining)),
	}}
	if d := diff(want, cla); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if errs := grpcEndpointProblems(cla); len(errs) > 0 {
		t.Error(errs)
	}
}

// TestGRPCFull translates the DAG that exercises every feature: only what
// gRPC can route remains, and all of it passes both checks.
func TestGRPCFull(t *testing.T) {
	d, snap := fullDAG()
	res := GRPC(d, snap, DefaultOptions())
	checkGRPC(t, res)

	var got []string
	for _, l := range res.Listeners {
		got = append(got, "L "+l.GetName())
	}
	for _, r := range res.Routes {
		got = append(got, "R "+r.GetName())
	}
	for _, c := range res.Clusters {
		got = append(got, "C "+c.GetName())
	}
	for _, e := range res.Endpoints {
		got = append(got, "E "+e.GetClusterName())
	}
	want := []string{
		// db and raw forward TCP: nothing for gRPC.
		"L api.example.com", "L api.example.com:443", "L api.example.com:80",
		"L grpc-server/api.example.com/0.0.0.0", "L grpc-server/api.example.com/127.0.0.1", "L grpc-server/api.example.com/::",
		"L grpc-server/www.example.com/0.0.0.0", "L grpc-server/www.example.com/127.0.0.1", "L grpc-server/www.example.com/::",
		"L www.example.com", "L www.example.com:80",
		"R grpc/api.example.com", "R grpc/www.example.com",
		// auth runs ext_authz for Envoy only; db is a TCP proxy.
		"C api", "C web",
		"E api", "E web",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("resource names (-want +got):\n%s", d)
	}

	// api.example.com has authorization: /healthz opts out and forwards,
	// "/" answers 403.
	routes := res.Routes[0].GetVirtualHosts()[0].GetRoutes()
	if len(routes) != 2 || routes[0].GetRoute().GetCluster() != "api" || routes[1].GetDirectResponse().GetStatus() != 403 {
		t.Errorf("api.example.com routes: %v", routes)
	}
}

// TestGRPCProblemsCatchesEnvoyShapes makes sure the check every grpc test
// relies on would catch the Envoy group's NACK-prone shapes.
func TestGRPCProblemsCatchesEnvoyShapes(t *testing.T) {
	d, snap := fullDAG()
	d.VirtualHosts[1].Routes = append(d.VirtualHosts[1].Routes, forward(func(r *dag.Route) {
		r.PathMatch = dag.PathMatch{Value: "/api"}
		r.ResponseTimeout = dur(time.Second)
		r.Forward.Cluster = d.Clusters[3]
		r.Forward.Mirrors = []dag.Mirror{{Cluster: d.Clusters[3], Percent: 10}}
	}))
	d.Clusters[0].Spec.LoadBalancer = dag.LBRandom
	d.Clusters[2].Spec.Protocol = "h2"
	errs := grpcProblems(Envoy(d, snap, DefaultOptions()))
	var text []string
	for _, err := range errs {
		text = append(text, err.Error())
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{
		"no api_listener", "typed_per_filter_config", "PathSeparatedPrefix", "request_mirror_policies",
		"RouteAction.timeout", "lb_policy RANDOM", "transport_socket", "scoped routes",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("grpcProblems did not report %q; it reported:\n%s", want, all)
		}
	}
}

func TestGRPCEmpty(t *testing.T) {
	for name, d := range map[string]*dag.DAG{"nil": nil, "empty": {}} {
		t.Run(name, func(t *testing.T) {
			if d := diff(&Resources{}, GRPC(d, nil, DefaultOptions())); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestGRPCDeterministic(t *testing.T) {
	d, snap := fullDAG()
	first := wireBytes(t, GRPC(d, snap, DefaultOptions()))
	for range 20 {
		again := wireBytes(t, GRPC(d, snap, DefaultOptions()))
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

// wireBytes marshals every resource deterministically, in order.
func wireBytes(t *testing.T, r *Resources) [][]byte {
	t.Helper()
	msgs := r.All()
	out := make([][]byte, 0, len(msgs))
	for _, m := range msgs {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}
