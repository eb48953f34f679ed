package translator

import (
	"fmt"
	"math"
	"net"
	"regexp"
	"strconv"
	"strings"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
)

// routerTypeURL is the typed_config type gRPC recognises as the router.
const routerTypeURL = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"

// grpcProblems lists what grpc-go v1.85's xDS client would NACK in a grpc
// group (the rules of its internal/xds/xdsclient/xdsresource/unmarshal_*.go
// and matcher.go), plus broken references between resources, which would
// leave a channel without config. It is the check behind every grpc test,
// the goldens included.
func grpcProblems(r *Resources) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(r.ScopedRoutes) > 0 || len(r.Secrets) > 0 {
		fail("the grpc group has %d scoped routes and %d secrets, want none", len(r.ScopedRoutes), len(r.Secrets))
	}
	routeNames := map[string]bool{}
	for _, rc := range r.Routes {
		routeNames[rc.GetName()] = true
	}
	clusterNames := map[string]bool{}
	for _, c := range r.Clusters {
		clusterNames[c.GetName()] = true
	}
	claNames := map[string]bool{}
	for _, cla := range r.Endpoints {
		claNames[cla.GetClusterName()] = true
	}

	for _, l := range r.Listeners {
		if l.GetApiListener() == nil && strings.HasPrefix(l.GetName(), "grpc-server/") {
			errs = append(errs, grpcServerListenerProblems(l)...)
			continue
		}
		rds, lerrs := grpcListenerProblems(l)
		errs = append(errs, lerrs...)
		if rds != "" && !routeNames[rds] {
			fail("listener %s: route configuration %q is not served", l.GetName(), rds)
		}
	}
	for _, rc := range r.Routes {
		for _, vh := range rc.GetVirtualHosts() {
			errs = append(errs, grpcVirtualHostProblems(rc.GetName(), vh, clusterNames)...)
		}
	}
	for _, c := range r.Clusters {
		errs = append(errs, grpcClusterProblems(c)...)
		if c.GetType() == envoy_config_cluster_v3.Cluster_EDS && !claNames[c.GetEdsClusterConfig().GetServiceName()] {
			fail("cluster %s: no load assignment %q", c.GetName(), c.GetEdsClusterConfig().GetServiceName())
		}
	}
	for _, cla := range r.Endpoints {
		errs = append(errs, grpcEndpointProblems(cla)...)
	}
	return errs
}

// grpcListenerProblems checks an API listener (unmarshal_lds.go) and
// returns the route configuration it names.
func grpcListenerProblems(l *envoy_config_listener_v3.Listener) (string, []error) {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("listener %s: "+format, append([]any{l.GetName()}, args...)...))
	}
	api := l.GetApiListener().GetApiListener()
	if api == nil {
		fail("no api_listener: gRPC would parse it as a server listener")
		return "", errs
	}
	hcm := &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager{}
	if err := api.UnmarshalTo(hcm); err != nil {
		fail("api_listener is not an HttpConnectionManager: %v", err)
		return "", errs
	}
	if hcm.GetXffNumTrustedHops() != 0 || len(hcm.GetOriginalIpDetectionExtensions()) > 0 {
		fail("xff_num_trusted_hops or original_ip_detection_extensions set")
	}
	rds := hcm.GetRds()
	switch {
	case rds == nil:
		fail("route specifier is not rds")
	case rds.GetConfigSource().GetAds() == nil && rds.GetConfigSource().GetSelf() == nil:
		fail("rds config_source is neither ads nor self")
	case rds.GetRouteConfigName() == "":
		fail("empty route_config_name")
	}
	filters := hcm.GetHttpFilters()
	if len(filters) == 0 {
		fail("no http filters")
	}
	seen := map[string]bool{}
	for i, f := range filters {
		if f.GetName() == "" || seen[f.GetName()] {
			fail("http filter %d: empty or duplicate name %q", i, f.GetName())
		}
		seen[f.GetName()] = true
		isRouter := f.GetTypedConfig().GetTypeUrl() == routerTypeURL
		switch {
		case i == len(filters)-1 && !isRouter:
			fail("the last http filter is %s, not the router", f.GetTypedConfig().GetTypeUrl())
		case i < len(filters)-1 && isRouter:
			fail("the router is not the last http filter")
		case !isRouter && !f.GetIsOptional():
			// Only the router is both registered and client-side in a
			// plain grpc-go binary (fault aside, which Switchyard never
			// configures); ext_authz in particular NACKs.
			fail("http filter %s (%s) is not one gRPC clients run", f.GetName(), f.GetTypedConfig().GetTypeUrl())
		}
	}
	return rds.GetRouteConfigName(), errs
}

// validGRPCDomain reports whether gRPC accepts a virtual-host domain, the
// way matcher.go's matchTypeForDomain classifies it: any invalid domain
// makes gRPC find no virtual host in the whole route configuration.
func validGRPCDomain(d string) bool {
	switch {
	case d == "":
		return false
	case d == "*", strings.HasPrefix(d, "*"), strings.HasSuffix(d, "*"):
		return true
	}
	return !strings.Contains(d, "*")
}

func grpcVirtualHostProblems(rcName string, vh *envoy_config_route_v3.VirtualHost, clusters map[string]bool) []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{rcName}, args...)...))
	}
	for _, d := range vh.GetDomains() {
		if !validGRPCDomain(d) {
			fail("domain %q is not a valid gRPC pattern", d)
		}
	}
	if len(vh.GetTypedPerFilterConfig()) > 0 {
		fail("virtual host has typed_per_filter_config")
	}
	errs = append(errs, retryProblems(rcName+" virtual host", vh.GetRetryPolicy())...)
	for i, rt := range vh.GetRoutes() {
		where := fmt.Sprintf("%s route %d (%s)", rcName, i, rt.GetName())
		errs = append(errs, grpcRouteProblems(where, rt, clusters)...)
	}
	return errs
}

func grpcRouteProblems(where string, rt *envoy_config_route_v3.Route, clusters map[string]bool) []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{where}, args...)...))
	}
	m := rt.GetMatch()
	if m == nil {
		fail("no match")
		return errs
	}
	switch p := m.GetPathSpecifier().(type) {
	case *envoy_config_route_v3.RouteMatch_Prefix, *envoy_config_route_v3.RouteMatch_Path:
	case *envoy_config_route_v3.RouteMatch_SafeRegex:
		if _, err := regexp.Compile(p.SafeRegex.GetRegex()); err != nil {
			fail("path regex: %v", err)
		}
	default:
		fail("path specifier %T", p)
	}
	if len(m.GetQueryParameters()) > 0 {
		fail("query parameters: gRPC skips the route")
	}
	for _, h := range m.GetHeaders() {
		switch s := h.GetHeaderMatchSpecifier().(type) {
		case nil:
			fail("header %s: no match specifier", h.GetName())
		case *envoy_config_route_v3.HeaderMatcher_StringMatch:
			errs = append(errs, stringMatchProblems(where+" header "+h.GetName(), s.StringMatch)...)
		case *envoy_config_route_v3.HeaderMatcher_SafeRegexMatch:
			// gRPC still reads the deprecated field, so the check must too.
			if _, err := regexp.Compile(s.SafeRegexMatch.GetRegex()); err != nil { //nolint:staticcheck
				fail("header %s regex: %v", h.GetName(), err)
			}
		}
	}
	if len(rt.GetTypedPerFilterConfig()) > 0 {
		fail("typed_per_filter_config")
	}
	a := rt.GetRoute()
	if a == nil {
		return errs
	}
	switch cs := a.GetClusterSpecifier().(type) {
	case *envoy_config_route_v3.RouteAction_Cluster:
		if !clusters[cs.Cluster] {
			fail("cluster %q is not served", cs.Cluster)
		}
	case *envoy_config_route_v3.RouteAction_WeightedClusters:
		var total uint64
		for _, c := range cs.WeightedClusters.GetClusters() {
			total += uint64(c.GetWeight().GetValue())
			if len(c.GetTypedPerFilterConfig()) > 0 {
				fail("weighted cluster %s has typed_per_filter_config", c.GetName())
			}
			if c.GetWeight().GetValue() > 0 && !clusters[c.GetName()] {
				fail("weighted cluster %q is not served", c.GetName())
			}
		}
		if total == 0 || total > math.MaxUint32 {
			fail("weighted clusters total %d", total)
		}
	default:
		fail("cluster specifier %T: gRPC skips the route", cs)
	}
	if len(a.GetRequestMirrorPolicies()) > 0 {
		fail("request_mirror_policies")
	}
	if a.GetTimeout() != nil {
		fail("RouteAction.timeout, which gRPC ignores (use max_stream_duration)")
	}
	return append(errs, retryProblems(where, a.GetRetryPolicy())...)
}

func stringMatchProblems(where string, sm *envoy_type_matcher_v3.StringMatcher) []error {
	switch p := sm.GetMatchPattern().(type) {
	case nil:
		return []error{fmt.Errorf("%s: string matcher without pattern", where)}
	case *envoy_type_matcher_v3.StringMatcher_Prefix:
		if p.Prefix == "" {
			return []error{fmt.Errorf("%s: empty prefix", where)}
		}
	case *envoy_type_matcher_v3.StringMatcher_Suffix:
		if p.Suffix == "" {
			return []error{fmt.Errorf("%s: empty suffix", where)}
		}
	case *envoy_type_matcher_v3.StringMatcher_Contains:
		if p.Contains == "" {
			return []error{fmt.Errorf("%s: empty contains", where)}
		}
	case *envoy_type_matcher_v3.StringMatcher_SafeRegex:
		if _, err := regexp.Compile(p.SafeRegex.GetRegex()); err != nil {
			return []error{fmt.Errorf("%s: %v", where, err)}
		}
	case *envoy_type_matcher_v3.StringMatcher_Custom:
		return []error{fmt.Errorf("%s: custom string matcher", where)}
	}
	return nil
}

func retryProblems(where string, rp *envoy_config_route_v3.RetryPolicy) []error {
	if rp == nil {
		return nil
	}
	var errs []error
	if rp.NumRetries != nil && rp.NumRetries.GetValue() < 1 {
		errs = append(errs, fmt.Errorf("%s: num_retries 0", where))
	}
	if b := rp.GetRetryBackOff(); b != nil {
		if b.GetBaseInterval().AsDuration() <= 0 {
			errs = append(errs, fmt.Errorf("%s: retry back-off base_interval %v", where, b.GetBaseInterval().AsDuration()))
		}
		if b.MaxInterval != nil && b.GetMaxInterval().AsDuration() <= 0 {
			errs = append(errs, fmt.Errorf("%s: retry back-off max_interval %v", where, b.GetMaxInterval().AsDuration()))
		}
	}
	return errs
}

// grpcClusterProblems checks a cluster (unmarshal_cds.go).
func grpcClusterProblems(c *envoy_config_cluster_v3.Cluster) []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("cluster %s: "+format, append([]any{c.GetName()}, args...)...))
	}
	switch c.GetType() {
	case envoy_config_cluster_v3.Cluster_EDS:
		if src := c.GetEdsClusterConfig().GetEdsConfig(); src.GetAds() == nil && src.GetSelf() == nil {
			fail("eds_config is neither ads nor self")
		}
	case envoy_config_cluster_v3.Cluster_LOGICAL_DNS:
		// dnsHostNameFromCluster in unmarshal_cds.go.
		eps := c.GetLoadAssignment().GetEndpoints()
		if len(eps) != 1 || len(eps[0].GetLbEndpoints()) != 1 {
			fail("a LOGICAL_DNS cluster needs exactly one locality with one endpoint")
			break
		}
		sa := eps[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
		if sa.GetAddress() == "" || sa.GetPortValue() == 0 || sa.GetResolverName() != "" {
			fail("a LOGICAL_DNS endpoint needs a host and a port and no resolver name")
		}
	default:
		fail("type %v, want EDS or LOGICAL_DNS", c.GetType())
	}
	switch c.GetLbPolicy() {
	case envoy_config_cluster_v3.Cluster_ROUND_ROBIN:
	case envoy_config_cluster_v3.Cluster_RING_HASH:
		if c.GetRingHashLbConfig().GetHashFunction() != envoy_config_cluster_v3.Cluster_RingHashLbConfig_XX_HASH {
			fail("ring hash function %v", c.GetRingHashLbConfig().GetHashFunction())
		}
	case envoy_config_cluster_v3.Cluster_LEAST_REQUEST:
		if cc := c.GetLeastRequestLbConfig().GetChoiceCount(); cc != nil && cc.GetValue() < 2 {
			fail("least request choice_count %d", cc.GetValue())
		}
	default:
		fail("lb_policy %v", c.GetLbPolicy())
	}
	if c.GetTransportSocket() != nil || len(c.GetTransportSocketMatches()) > 0 {
		fail("transport_socket: gRPC NACKs an UpstreamTlsContext without certificate-provider instances")
	}
	if c.GetLoadBalancingPolicy() != nil || c.GetLrsServer() != nil {
		fail("load_balancing_policy or lrs_server set")
	}
	return errs
}

// grpcEndpointProblems checks a load assignment (unmarshal_eds.go).
func grpcEndpointProblems(cla *envoy_config_endpoint_v3.ClusterLoadAssignment) []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("load assignment %s: "+format, append([]any{cla.GetClusterName()}, args...)...))
	}
	if cla.GetClusterName() == "" {
		fail("empty cluster_name")
	}
	type localityKey struct {
		priority              uint32
		region, zone, subZone string
	}
	localities := map[localityKey]bool{}
	addresses := map[string]bool{}
	sums := map[uint32]uint64{}
	for _, l := range cla.GetEndpoints() {
		if l.GetLocality() == nil {
			fail("locality without a locality")
			continue
		}
		w := l.GetLoadBalancingWeight().GetValue()
		if w == 0 {
			fail("locality %v has weight 0: gRPC drops it", l.GetLocality())
			continue
		}
		sums[l.GetPriority()] += uint64(w)
		k := localityKey{l.GetPriority(), l.GetLocality().GetRegion(), l.GetLocality().GetZone(), l.GetLocality().GetSubZone()}
		if localities[k] {
			fail("duplicate locality %v at priority %d", l.GetLocality(), l.GetPriority())
		}
		localities[k] = true
		for _, ep := range l.GetLbEndpoints() {
			if ep.GetLoadBalancingWeight() != nil && ep.GetLoadBalancingWeight().GetValue() == 0 {
				fail("endpoint weight 0")
			}
			sa := ep.GetEndpoint().GetAddress().GetSocketAddress()
			addr := net.JoinHostPort(sa.GetAddress(), strconv.FormatUint(uint64(sa.GetPortValue()), 10))
			if addresses[addr] {
				fail("duplicate address %s", addr)
			}
			addresses[addr] = true
		}
	}
	for p := uint32(0); p < uint32(len(sums)); p++ {
		if _, ok := sums[p]; !ok {
			fail("priority %d missing", p)
		}
	}
	for p, s := range sums {
		if s > math.MaxUint32 {
			fail("priority %d weights sum to %d", p, s)
		}
	}
	return errs
}
