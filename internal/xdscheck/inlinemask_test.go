package xdscheck

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_http_rbac_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	envoy_filter_http_router_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

type vhostT = envoy_config_route_v3.VirtualHost

// TestInlineMaskFieldNumbers holds maskInline's field numbers to the
// descriptors: each names the field it is said to, of the kind it reads.
func TestInlineMaskFieldNumbers(t *testing.T) {
	for _, c := range []struct {
		m    proto.Message
		num  protowire.Number
		name protoreflect.Name
		kind protoreflect.Kind
	}{
		{&hcmT{}, hcmRouteConfigField, "route_config", protoreflect.MessageKind},
		{&envoy_config_route_v3.RouteConfiguration{}, rcNameField, "name", protoreflect.StringKind},
		{&envoy_config_route_v3.RouteConfiguration{}, rcVirtualHostsField, "virtual_hosts", protoreflect.MessageKind},
		{&vhostT{}, vhNameField, "name", protoreflect.StringKind},
	} {
		fd := c.m.ProtoReflect().Descriptor().Fields().ByNumber(c.num)
		if fd == nil || fd.Name() != c.name || fd.Kind() != c.kind {
			t.Errorf("%s field %d is %v, want %s of kind %v", c.m.ProtoReflect().Descriptor().FullName(), c.num, fd, c.name, c.kind)
		}
	}
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustAny(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// lenField is an encoded length-delimited field.
func lenField(num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), v)
}

// answering is the route of a server listener: every path, answered by
// the listener itself.
func answering() *envoy_config_route_v3.Route {
	return &envoy_config_route_v3.Route{
		Match:  &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/"}},
		Action: &envoy_config_route_v3.Route_NonForwardingAction{NonForwardingAction: &envoy_config_route_v3.NonForwardingAction{}},
	}
}

// forwarding is a route to cluster and, weighted, to others.
func forwarding(cluster string, others ...string) *envoy_config_route_v3.Route {
	a := &envoy_config_route_v3.RouteAction{ClusterSpecifier: &envoy_config_route_v3.RouteAction_Cluster{Cluster: cluster}}
	if len(others) > 0 {
		var wcs []*envoy_config_route_v3.WeightedCluster_ClusterWeight
		for _, o := range others {
			wcs = append(wcs, &envoy_config_route_v3.WeightedCluster_ClusterWeight{Name: o, Weight: wrapperspb.UInt32(1)})
		}
		a.ClusterSpecifier = &envoy_config_route_v3.RouteAction_WeightedClusters{WeightedClusters: &envoy_config_route_v3.WeightedCluster{Clusters: wcs}}
	}
	return &envoy_config_route_v3.Route{
		Match:  &envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/"}},
		Action: &envoy_config_route_v3.Route_Route{Route: a},
	}
}

// serverVHost is a server listener's virtual host, nameless, changed by
// change.
func serverVHost(change func(*vhostT)) *vhostT {
	vh := &vhostT{Domains: []string{"*"}, Routes: []*envoy_config_route_v3.Route{answering()}}
	if change != nil {
		change(vh)
	}
	return vh
}

// serverHCM is a gRPC host's server listener's connection manager, as
// the translator makes it, its virtual host made by serverVHost and
// named vh, its route configuration named rc, all changed by change.
func serverHCM(t *testing.T, rc, vh string, changeVH func(*vhostT), change func(*hcmT)) []byte {
	v := serverVHost(changeVH)
	v.Name = vh
	hcm := serverHCMWithout(t, change)
	hcm.RouteSpecifier = &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_RouteConfig{
		RouteConfig: &envoy_config_route_v3.RouteConfiguration{Name: rc, VirtualHosts: []*vhostT{v}},
	}
	return mustMarshal(t, hcm)
}

// serverHCMWithout is serverHCM without its route configuration.
func serverHCMWithout(t *testing.T, change func(*hcmT)) *hcmT {
	hcm := &hcmT{
		StatPrefix: "grpc",
		HttpFilters: []*envoy_filter_network_http_connection_manager_v3.HttpFilter{{
			Name:       "envoy.filters.http.rbac",
			ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &envoy_filter_http_rbac_v3.RBAC{})},
		}, {
			Name:       "envoy.filters.http.router",
			ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &envoy_filter_http_router_v3.Router{})},
		}},
	}
	if change != nil {
		change(hcm)
	}
	return hcm
}

// rawHCM is serverHCM's connection manager holding rc, an encoded route
// configuration, after its other fields.
func rawHCM(t *testing.T, rc []byte) []byte {
	return append(mustMarshal(t, serverHCMWithout(t, nil)), lenField(hcmRouteConfigField, rc)...)
}

// rawRC is a route configuration named rc (its field bytes as given)
// holding, after the name, one virtual host named vh: the name's field,
// then serverVHost's other fields.
func rawRC(t *testing.T, rc, vh []byte) []byte {
	return append(rc, lenField(rcVirtualHostsField, append(vh, mustMarshal(t, serverVHost(nil))...))...)
}

// inlineVariants are encodings of server listeners' connection managers,
// keyed by a family name, each made for the i'th host: clean ones,
// invalid ones, and encodings maskInline must decline or whose names
// decide what they decode to.
func inlineVariants(t *testing.T) map[string]func(i int) []byte {
	rcName := func(i int) string { return fmt.Sprintf("grpc/app-%d.example.com", i) }
	vhName := func(i int) string { return fmt.Sprintf("app-%d.example.com", i) }
	plain := func(changeVH func(*vhostT), change func(*hcmT)) func(int) []byte {
		return func(i int) []byte { return serverHCM(t, rcName(i), vhName(i), changeVH, change) }
	}
	raw := func(rc, vh func(i int) []byte) func(int) []byte {
		return func(i int) []byte { return rawHCM(t, rawRC(t, rc(i), vh(i))) }
	}
	rcField := func(i int) []byte { return lenField(rcNameField, []byte(rcName(i))) }
	vhField := func(i int) []byte { return lenField(vhNameField, []byte(vhName(i))) }
	return map[string]func(int) []byte{
		"clean":              plain(nil, nil),
		"clean, raw":         raw(rcField, vhField),
		"clean, other stats": plain(nil, func(h *hcmT) { h.StatPrefix = "other" }),
		"host policy": plain(func(vh *vhostT) {
			vh.TypedPerFilterConfig = map[string]*anypb.Any{"envoy.filters.http.rbac": mustAny(t, &envoy_filter_http_rbac_v3.RBACPerRoute{})}
		}, nil),
		"routes to clusters": plain(func(vh *vhostT) {
			vh.Routes = []*envoy_config_route_v3.Route{forwarding("backend"), forwarding("", "blue", "green")}
		}, nil),
		"routes to the host's cluster": func(i int) []byte {
			return plain(func(vh *vhostT) { vh.Routes = []*envoy_config_route_v3.Route{forwarding(vhName(i))} }, nil)(i)
		},
		"ext_authz service": plain(nil, func(h *hcmT) {
			h.HttpFilters = append([]*envoy_filter_network_http_connection_manager_v3.HttpFilter{extAuthz(t, "authz")}, h.HttpFilters...)
		}),
		"no domains": plain(func(vh *vhostT) { vh.Domains = nil }, nil),
		"bad header value": plain(func(vh *vhostT) {
			vh.RequestHeadersToAdd = []*envoy_config_core_v3.HeaderValueOption{{Header: &envoy_config_core_v3.HeaderValue{Key: "x-host", Value: "%BAD"}}}
		}, nil),
		"filter does not unmarshal": plain(nil, func(h *hcmT) {
			h.HttpFilters[0].GetTypedConfig().TypeUrl = "type.googleapis.com/nope"
		}),
		"empty host name for some": raw(rcField, func(i int) []byte {
			if i%3 == 0 {
				return lenField(vhNameField, nil)
			}
			return vhField(i)
		}),
		"host name not UTF-8 for some": raw(rcField, func(i int) []byte {
			if i%3 == 1 {
				return lenField(vhNameField, []byte(vhName(i)+"\xff"))
			}
			return vhField(i)
		}),
		"route name not UTF-8 for some": raw(func(i int) []byte {
			if i%3 == 2 {
				return lenField(rcNameField, []byte(rcName(i)+"\xc3"))
			}
			return rcField(i)
		}, vhField),
		"no host name":  raw(rcField, func(int) []byte { return nil }),
		"no route name": raw(func(int) []byte { return nil }, vhField),
		"host name a number": raw(rcField, func(i int) []byte {
			return protowire.AppendVarint(protowire.AppendTag(nil, vhNameField, protowire.VarintType), uint64(i))
		}),
		"host name twice":  raw(rcField, func(i int) []byte { return append(vhField(i), lenField(vhNameField, []byte("again"))...) }),
		"route name twice": raw(func(i int) []byte { return append(rcField(i), lenField(rcNameField, []byte("again"))...) }, vhField),
		"route name after the host": func(i int) []byte {
			return append(plain(nil, nil)(i), lenField(hcmRouteConfigField, lenField(rcNameField, []byte("after")))...)
		},
		"two hosts": func(i int) []byte {
			rc := rawRC(t, rcField(i), vhField(i))
			rc = append(rc, lenField(rcVirtualHostsField, append(lenField(vhNameField, []byte(vhName(i+100))), mustMarshal(t, serverVHost(nil))...))...)
			return rawHCM(t, rc)
		},
		"two hosts, second nameless": func(i int) []byte {
			rc := rawRC(t, rcField(i), vhField(i))
			return rawHCM(t, append(rc, lenField(rcVirtualHostsField, mustMarshal(t, serverVHost(nil)))...))
		},
		"host before the route name": func(i int) []byte {
			rc := rawRC(t, nil, vhField(i))
			return rawHCM(t, append(rc, rcField(i)...))
		},
		"route_config twice": func(i int) []byte {
			return append(plain(nil, nil)(i), lenField(hcmRouteConfigField, rawRC(t, rcField(i+100), vhField(i+100)))...)
		},
		"unknown fields": func(i int) []byte {
			vh := append(vhField(i), lenField(999, []byte("x"))...)
			return rawHCM(t, append(rawRC(t, rcField(i), vh), lenField(998, []byte("y"))...))
		},
		"rds after route_config": func(i int) []byte {
			return append(plain(nil, nil)(i), lenField(hcmRDSField, mustMarshal(t, &envoy_filter_network_http_connection_manager_v3.Rds{
				ConfigSource: &envoy_config_core_v3.ConfigSource{
					ResourceApiVersion:    envoy_config_core_v3.ApiVersion_V3,
					ConfigSourceSpecifier: &envoy_config_core_v3.ConfigSource_Ads{Ads: &envoy_config_core_v3.AggregatedConfigSource{}},
				},
				RouteConfigName: "shared",
			}))...)
		},
		// The host's route moves out of it, into the route
		// configuration's next field (internal_only_headers, where it is
		// not UTF-8), for odd hosts: keyed without the parts' lengths,
		// both would have one key.
		"route outside the host for some": func(i int) []byte {
			route := lenField(3, mustMarshal(t, answering()))
			vh := append(vhField(i), lenField(2, []byte("*"))...)
			rc := rcField(i)
			if i%2 == 1 {
				rc = append(rc, lenField(rcVirtualHostsField, vh)...)
				return rawHCM(t, append(rc, route...))
			}
			return rawHCM(t, append(rc, lenField(rcVirtualHostsField, append(vh, route...))...))
		},
		"truncated": func(i int) []byte {
			b := plain(nil, nil)(i)
			return b[:len(b)-1]
		},
	}
}

// listenerOf is a server listener of the connection manager encoded as
// hcm.
func listenerOf(hcm []byte) *envoy_config_listener_v3.Listener {
	return &envoy_config_listener_v3.Listener{
		Name: "grpc-server",
		Address: &envoy_config_core_v3.Address{Address: &envoy_config_core_v3.Address_SocketAddress{SocketAddress: &envoy_config_core_v3.SocketAddress{
			Address: "::", PortSpecifier: &envoy_config_core_v3.SocketAddress_PortValue{},
		}}},
		FilterChains: []*envoy_config_listener_v3.FilterChain{{Filters: []*envoy_config_listener_v3.Filter{{
			Name:       "envoy.filters.network.http_connection_manager",
			ConfigType: &envoy_config_listener_v3.Filter_TypedConfig{TypedConfig: &anypb.Any{TypeUrl: hcmType, Value: hcm}},
		}}}},
	}
}

// TestInlineMaskedConnectionManagersAreInspected inspects server
// listeners of every variant under many host names, in random orders,
// with cleanAnys unused and then with it: finding a connection manager
// by its bytes with its names masked must give the same problems and
// the same references, in the same order, as unpacking it.
func TestInlineMaskedConnectionManagersAreInspected(t *testing.T) {
	var ms []proto.Message
	for family, make := range inlineVariants(t) {
		for i := range 6 {
			l := listenerOf(make(i))
			l.Name = fmt.Sprintf("%s %d", family, i)
			ms = append(ms, l)
		}
	}
	saved := cleanAnys
	defer func() { cleanAnys = saved }()
	want := inspectedShuffled(t, ms, rand.New(rand.NewPCG(3, 4)))
	variants := inlineVariants(t)
	for _, family := range []string{"clean", "clean, raw", "routes to clusters", "unknown fields"} {
		key, ok := maskInline(nil, variants[family](0))
		if _, held := cleanAnys.byInline[string(key)]; !ok || !held {
			t.Errorf("%s: not remembered by its masked bytes (masked: %t)", family, ok)
		}
	}
	if n := len(cleanAnys.byInline); n > 16 {
		t.Errorf("cleanAnys holds %d connection managers by their masked bytes; want at most one per family", n)
	}
	if !slices.ContainsFunc(ms, func(m proto.Message) bool { return strings.Contains(want[m], "cluster.v3.Cluster blue") }) {
		t.Error("no variant refers to a cluster")
	}
	for _, problem := range []string{"error ", "invalid wire-format", "invalid UTF-8", "virtual_hosts[0].name", "domains", "is not an Envoy command"} {
		if !slices.ContainsFunc(ms, func(m proto.Message) bool { return strings.Contains(want[m], problem) }) {
			t.Errorf("no variant's inspection says %q", problem)
		}
	}
}

// TestInlineMaskKeys: the translator's connection managers of two hosts
// have one key; a change outside the names, or a name's bytes moved
// across a part, makes another.
func TestInlineMaskKeys(t *testing.T) {
	v := inlineVariants(t)
	key := func(family string, i int) []byte {
		k, ok := maskInline(nil, v[family](i))
		if !ok {
			t.Fatalf("%s %d: declined", family, i)
		}
		return k
	}
	if !bytes.Equal(key("clean", 1), key("clean", 2)) {
		t.Error("two hosts' connection managers have different keys")
	}
	if bytes.Equal(key("clean", 1), key("clean, other stats", 1)) {
		t.Error("connection managers of different stat prefixes share a key")
	}
	if bytes.Equal(key("route outside the host for some", 1), key("route outside the host for some", 2)) {
		t.Error("a route in its host and outside it share a key")
	}
	for _, family := range []string{"no host name", "no route name", "host name a number", "host name twice", "route name twice", "two hosts", "host before the route name", "route_config twice", "truncated"} {
		if _, ok := maskInline(nil, v[family](1)); ok {
			t.Errorf("%s: masked, want declined", family)
		}
	}
	for i, family := range []string{"empty host name for some", "host name not UTF-8 for some", "route name not UTF-8 for some"} {
		if _, ok := maskInline(nil, v[family](i)); ok {
			t.Errorf("%s %d: masked, want declined", family, i)
		}
	}
}
