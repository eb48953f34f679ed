package pipeline

import (
	"slices"
	"time"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

// Make-before-break. Cluster names are content hashes (DESIGN.md decision
// 1), so changing a route's weights or services switches it to a cluster
// its clients do not use yet. Pushing that route at once races the
// client's setup of the cluster: Envoy answers 503 while the cluster warms,
// and grpc-go fails RPCs with "unknown cluster selected for RPC" between
// installing the new route table and creating the cluster's balancer. So a
// route configuration that starts using a cluster is published in two
// steps:
//
//  1. the cluster (and its endpoints) goes out at once, with the route
//     configuration clients already have; gRPC clients also get a warm-up
//     route in it that no RPC can match (it requires a "-bin" header, which
//     gRPC never matches) but that references the cluster, so they set it
//     up;
//  2. once the cluster has been out that way for Warmup, the new route
//     configuration follows.
//
// A cluster no route configuration uses any more stays for Linger, so
// requests still on their way to it find it. New route configurations (a
// new host) go out at once: no client is routing through them yet.

// DefaultWarmup and DefaultLinger are the staging delays: long enough for a
// client to fetch a cluster and its endpoints, short enough that an edit is
// live well within a second.
const (
	DefaultWarmup = 300 * time.Millisecond
	DefaultLinger = 10 * time.Second
)

// warmupHeader is the header the warm-up route requires. gRPC never
// matches headers whose name ends in "-bin", so the route never takes an
// RPC.
const warmupHeader = "switchyard-warmup-bin"

// stager publishes one group's builds in steps.
type stager struct {
	warmup, linger time.Duration
	// warmupRoutes adds warm-up routes (the grpc group).
	warmupRoutes bool
	// staged is false for groups without routes (dns): everything goes out
	// at once and removals are immediate.
	staged bool

	target map[string][]*xdscache.Resource
	// current holds the route configurations clients have, by name.
	current map[string]*xdscache.Resource
	// refs records, per route configuration, since when each cluster it
	// references (or warms up) has been out.
	refs      map[string]map[string]time.Time
	lingering map[string]lingerer
	started   bool
}

// lingerer is a cluster no route uses, kept until its time is up.
type lingerer struct {
	cluster, cla *xdscache.Resource
	until        time.Time
}

func newStager(staged, warmupRoutes bool, warmup, linger time.Duration) *stager {
	return &stager{
		staged: staged, warmupRoutes: warmupRoutes, warmup: warmup, linger: linger,
		current:   map[string]*xdscache.Resource{},
		refs:      map[string]map[string]time.Time{},
		lingering: map[string]lingerer{},
	}
}

// stage records a new target (nil keeps the last) and returns what to
// publish now, and when to call it again (zero when nothing is pending).
func (s *stager) stage(target map[string][]*xdscache.Resource, now time.Time) (map[string][]*xdscache.Resource, time.Time) {
	if !s.staged {
		if target != nil {
			s.target = target
		}
		return s.target, time.Time{}
	}
	if target != nil {
		s.retire(target, now)
		s.target = target
	}
	return s.publish(now)
}

// retire starts lingering the clusters the new target drops and stops it
// for those it brings back.
func (s *stager) retire(target map[string][]*xdscache.Resource, now time.Time) {
	next := byName(target[typeCluster])
	if s.target != nil && s.started {
		assignments := byName(s.target[typeEndpoint])
		for name, c := range byName(s.target[typeCluster]) {
			if _, kept := next[name]; !kept {
				s.lingering[name] = lingerer{cluster: c, cla: assignments[name], until: now.Add(s.linger)}
			}
		}
	}
	for name := range next {
		delete(s.lingering, name)
	}
	s.started = true
}

// publish assembles what goes out now.
func (s *stager) publish(now time.Time) (map[string][]*xdscache.Resource, time.Time) {
	var next time.Time
	later := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	out := map[string][]*xdscache.Resource{}
	for t, rs := range s.target {
		if t != typeRoute {
			out[t] = rs
		}
	}
	for name, l := range s.lingering {
		if !now.Before(l.until) {
			delete(s.lingering, name)
			continue
		}
		later(l.until)
		out[typeCluster] = append(out[typeCluster], l.cluster)
		if l.cla != nil {
			out[typeEndpoint] = append(out[typeEndpoint], l.cla)
		}
	}
	if _, serves := s.target[typeRoute]; serves {
		out[typeRoute] = s.routes(now, later)
	}
	return out, next
}

// routes decides, per route configuration, between its target and the
// version clients have (with a warm-up route for gRPC).
func (s *stager) routes(now time.Time, later func(time.Time)) []*xdscache.Resource {
	out := make([]*xdscache.Resource, 0, len(s.target[typeRoute]))
	seen := map[string]bool{}
	for _, tgt := range s.target[typeRoute] {
		seen[tgt.Name] = true
		cur, known := s.current[tgt.Name]
		refs := s.refs[tgt.Name]
		if refs == nil {
			refs = map[string]time.Time{}
			s.refs[tgt.Name] = refs
		}
		var cold []string
		for _, c := range routeClusters(tgt.Message) {
			since, ok := refs[c]
			switch {
			case !known:
				refs[c] = now.Add(-s.warmup)
			case !ok:
				refs[c] = now
				cold = append(cold, c)
				later(now.Add(s.warmup))
			case now.Before(since.Add(s.warmup)):
				cold = append(cold, c)
				later(since.Add(s.warmup))
			}
		}
		if len(cold) == 0 {
			s.current[tgt.Name] = tgt
			s.forget(tgt)
			out = append(out, tgt)
			continue
		}
		out = append(out, s.warming(cur, cold))
	}
	for name := range s.current {
		if !seen[name] {
			delete(s.current, name)
			delete(s.refs, name)
		}
	}
	return out
}

// forget drops the clusters a published route configuration no longer
// uses, so that using them again needs a new warm-up.
func (s *stager) forget(rc *xdscache.Resource) {
	keep := map[string]bool{}
	for _, c := range routeClusters(rc.Message) {
		keep[c] = true
	}
	for c := range s.refs[rc.Name] {
		if !keep[c] {
			delete(s.refs[rc.Name], c)
		}
	}
}

// warming is the version of a route configuration published while clusters
// warm up: the one clients have, plus a warm-up route for gRPC.
func (s *stager) warming(cur *xdscache.Resource, cold []string) *xdscache.Resource {
	rc, ok := cur.Message.(*envoy_config_route_v3.RouteConfiguration)
	if !s.warmupRoutes || !ok {
		return cur
	}
	r, err := xdscache.NewResource(addWarmupRoute(rc, cold))
	if err != nil {
		return cur
	}
	return r
}

// addWarmupRoute returns a copy of rc whose virtual hosts end with a route
// that matches no RPC but references the clusters.
func addWarmupRoute(rc *envoy_config_route_v3.RouteConfiguration, clusters []string) *envoy_config_route_v3.RouteConfiguration {
	out := proto.Clone(rc).(*envoy_config_route_v3.RouteConfiguration)
	clusters = slices.Clone(clusters)
	slices.Sort(clusters)
	var wcs []*envoy_config_route_v3.WeightedCluster_ClusterWeight
	for _, c := range slices.Compact(clusters) {
		wcs = append(wcs, &envoy_config_route_v3.WeightedCluster_ClusterWeight{Name: c, Weight: wrapperspb.UInt32(1)})
	}
	warm := &envoy_config_route_v3.Route{
		Name: "switchyard-warmup",
		Match: &envoy_config_route_v3.RouteMatch{
			PathSpecifier: &envoy_config_route_v3.RouteMatch_Prefix{Prefix: "/"},
			Headers: []*envoy_config_route_v3.HeaderMatcher{{
				Name:                 warmupHeader,
				HeaderMatchSpecifier: &envoy_config_route_v3.HeaderMatcher_PresentMatch{PresentMatch: true},
			}},
		},
		Action: &envoy_config_route_v3.Route_Route{Route: &envoy_config_route_v3.RouteAction{
			ClusterSpecifier: &envoy_config_route_v3.RouteAction_WeightedClusters{WeightedClusters: &envoy_config_route_v3.WeightedCluster{Clusters: wcs}},
		}},
	}
	for _, vh := range out.GetVirtualHosts() {
		vh.Routes = append(vh.Routes, warm)
	}
	return out
}

// routeClusters lists the clusters a route configuration forwards to.
func routeClusters(m proto.Message) []string {
	rc, ok := m.(*envoy_config_route_v3.RouteConfiguration)
	if !ok {
		return nil
	}
	var out []string
	for _, vh := range rc.GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			a := r.GetRoute()
			if c := a.GetCluster(); c != "" {
				out = append(out, c)
			}
			for _, w := range a.GetWeightedClusters().GetClusters() {
				out = append(out, w.GetName())
			}
			for _, m := range a.GetRequestMirrorPolicies() {
				out = append(out, m.GetCluster())
			}
		}
	}
	return out
}

func byName(rs []*xdscache.Resource) map[string]*xdscache.Resource {
	m := make(map[string]*xdscache.Resource, len(rs))
	for _, r := range rs {
		m[r.Name] = r
	}
	return m
}

// updateEndpoints records load assignments the endpoint path pushed, so a
// later step does not publish the older ones of the last full build.
func (s *stager) updateEndpoints(changed map[string]*xdscache.Resource) {
	if len(changed) == 0 {
		return
	}
	eps := s.target[typeEndpoint]
	for i, r := range eps {
		if n, ok := changed[r.Name]; ok {
			eps[i] = n
		}
	}
}

// peek reports when the next step is due without changing anything.
func (s *stager) peek(now time.Time) time.Time {
	if !s.staged || s.target == nil {
		return time.Time{}
	}
	var next time.Time
	later := func(t time.Time) {
		if t.Before(now) {
			t = now
		}
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for _, l := range s.lingering {
		later(l.until)
	}
	for _, tgt := range s.target[typeRoute] {
		if s.current[tgt.Name] == tgt {
			continue
		}
		for _, c := range routeClusters(tgt.Message) {
			if since, ok := s.refs[tgt.Name][c]; ok {
				later(since.Add(s.warmup))
			}
		}
	}
	return next
}
