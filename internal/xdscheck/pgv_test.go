package xdscheck

import (
	"strings"
	"testing"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// TestValidateNamesFieldAndValue checks that what ValidateAll finds is
// reported with the proto path of the field and its value.
func TestValidateNamesFieldAndValue(t *testing.T) {
	addr := func(port uint32) *envoy_config_core_v3.Address {
		return &envoy_config_core_v3.Address{Address: &envoy_config_core_v3.Address_SocketAddress{SocketAddress: &envoy_config_core_v3.SocketAddress{
			Address: "10.0.0.1", PortSpecifier: &envoy_config_core_v3.SocketAddress_PortValue{PortValue: port},
		}}}
	}
	cla := &envoy_config_endpoint_v3.ClusterLoadAssignment{ClusterName: "c", Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{{
		LbEndpoints: []*envoy_config_endpoint_v3.LbEndpoint{
			{HostIdentifier: &envoy_config_endpoint_v3.LbEndpoint_Endpoint{Endpoint: &envoy_config_endpoint_v3.Endpoint{Address: addr(80)}}},
			{HostIdentifier: &envoy_config_endpoint_v3.LbEndpoint_Endpoint{Endpoint: &envoy_config_endpoint_v3.Endpoint{Address: addr(80)}}},
		},
		Priority: 200,
	}}}
	rc := &envoy_config_route_v3.RouteConfiguration{Name: "r", VirtualHosts: []*envoy_config_route_v3.VirtualHost{{Name: "v", Domains: []string{"a"}, Routes: []*envoy_config_route_v3.Route{{
		Match:  &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/"}},
		Action: &envoy_config_route_v3.Route_Route{Route: &envoy_config_route_v3.RouteAction{ClusterSpecifier: &envoy_config_route_v3.RouteAction_Cluster{Cluster: ""}}},
	}}}}}
	for _, tc := range []struct {
		name string
		errs []error
		want string
	}{
		{"number", Validate(cla), "endpoints[0].priority: 200: value must be less than or equal to 128"},
		{"string in a oneof", Validate(rc), `virtual_hosts[0].routes[0].route.cluster: "": value length must be at least 1`},
		{"empty list", Validate(&envoy_config_route_v3.RouteConfiguration{Name: "r", VirtualHosts: []*envoy_config_route_v3.VirtualHost{{Name: "v"}}}),
			"virtual_hosts[0].domains: 0 items: value must contain at least 1 item(s)"},
	} {
		var got []string
		for _, err := range tc.errs {
			got = append(got, err.Error())
		}
		if !strings.Contains(strings.Join(got, "\n"), tc.want) {
			t.Errorf("%s: want %q among %q", tc.name, tc.want, got)
		}
	}
}

// TestMapProblemsInKeyOrder checks that what is wrong inside a map is
// reported in the order of its keys on every run, not in the map's
// random iteration order: a condition's message must not change between
// two builds of the same input.
func TestMapProblemsInKeyOrder(t *testing.T) {
	perFilter := map[string]*anypb.Any{}
	for _, k := range []string{"d", "b", "a", "c", "e"} {
		perFilter[k] = &anypb.Any{TypeUrl: "type.googleapis.com/switchyard.test.Missing" + strings.ToUpper(k)}
	}
	rc := &envoy_config_route_v3.RouteConfiguration{Name: "r", VirtualHosts: []*envoy_config_route_v3.VirtualHost{{
		Name: "v", Domains: []string{"a"}, TypedPerFilterConfig: perFilter,
	}}}
	var first []string
	for run := range 20 {
		var got []string
		for _, err := range Validate(rc) {
			got = append(got, err.Error())
		}
		if len(got) != len(perFilter) {
			t.Fatalf("run %d: want %d problems, one per entry, got %q", run, len(perFilter), got)
		}
		for i, want := range []string{"MissingA", "MissingB", "MissingC", "MissingD", "MissingE"} {
			if !strings.Contains(got[i], want) {
				t.Fatalf("run %d: problem %d is %q, want the one about %s (key order)", run, i, got[i], want)
			}
		}
		if first == nil {
			first = got
		} else if strings.Join(got, "\n") != strings.Join(first, "\n") {
			t.Fatalf("run %d: problems %q differ from the first run's %q", run, got, first)
		}
	}
}
