package pipeline

import (
	"slices"
	"time"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/switchyard-dev/switchyard/internal/incremental"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Make-before-break. Cluster names are content hashes (site/architecture.md, decision
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
//
// The stager works on what changed: a route configuration is looked at
// again only when its target changes or while it waits for a cluster, so a
// step costs nothing for the thousands of hosts an edit did not touch.

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

	// target is the group's resources as built (the engine's, read only).
	target incremental.Targets
	// current holds the route configurations clients have, by name. The
	// clusters a current route configuration uses are warm.
	current map[string]*xdsres.Resource
	// pending holds the route configurations published while their target
	// waits for clusters to warm up, and what they wait for.
	pending   map[string]*wait
	lingering map[string]lingerer
	started   bool
}

// wait is what a pending route configuration waits for: since when each
// cluster its targets brought in has been out, and when the last of those
// its target uses will be warm.
type wait struct {
	since map[string]time.Time
	ready time.Time
}

// lingerer is a cluster no route uses, kept until its time is up.
type lingerer struct {
	cluster, cla *xdsres.Resource
	until        time.Time
}

func newStager(staged, warmupRoutes bool, warmup, linger time.Duration) *stager {
	return &stager{
		staged: staged, warmupRoutes: warmupRoutes, warmup: warmup, linger: linger,
		current:   map[string]*xdsres.Resource{},
		pending:   map[string]*wait{},
		lingering: map[string]lingerer{},
	}
}

// stage records a build of the group (target, and what changed in it;
// all when everything is new) and returns what to publish now.
func (s *stager) stage(target incremental.Targets, changes map[string]map[string]incremental.Change, all bool, now time.Time) []xdsres.Change {
	s.target = target
	var out []xdsres.Change
	if all {
		for t, byName := range target {
			for name, r := range byName.All() {
				if s.staged && t == typeRoute {
					out = s.route(name, r, now, out)
					continue
				}
				out = append(out, xdsres.Change{TypeURL: t, Name: name, Resource: r})
			}
		}
		s.started = true
		return out
	}
	if !s.staged {
		for t, byName := range changes {
			for name, c := range byName {
				out = append(out, xdsres.Change{TypeURL: t, Name: name, Resource: c.New})
			}
		}
		return out
	}
	s.retire(changes, now)
	for t, byName := range changes {
		if t == typeRoute {
			continue
		}
		for name, c := range byName {
			if _, kept := s.lingering[name]; kept && c.New == nil && (t == typeCluster || t == typeEndpoint) {
				continue
			}
			out = append(out, xdsres.Change{TypeURL: t, Name: name, Resource: c.New})
		}
	}
	for name, c := range changes[typeRoute] {
		if c.New == nil {
			delete(s.current, name)
			delete(s.pending, name)
			out = append(out, xdsres.Change{TypeURL: typeRoute, Name: name})
			continue
		}
		out = s.route(name, c.New, now, out)
	}
	// Whatever else is due goes out with this step, as it would on a tick.
	return append(out, s.tick(now)...)
}

// retire starts lingering the clusters the build drops and stops it for
// those it brings back.
func (s *stager) retire(changes map[string]map[string]incremental.Change, now time.Time) {
	for name, c := range changes[typeCluster] {
		switch {
		case c.New != nil:
			delete(s.lingering, name)
		case c.Old != nil && s.started:
			s.lingering[name] = lingerer{cluster: c.Old, cla: changes[typeEndpoint][name].Old, until: now.Add(s.linger)}
		}
	}
	s.started = true
}

// tick publishes what is due: route configurations whose clusters have
// warmed up, and the end of lingering.
func (s *stager) tick(now time.Time) []xdsres.Change {
	if !s.staged {
		return nil
	}
	var out []xdsres.Change
	for name, w := range s.pending {
		switch tgt := s.target[typeRoute].Get(name); {
		case tgt == nil:
			delete(s.pending, name)
		case !now.Before(w.ready):
			out = s.route(name, tgt, now, out)
		}
	}
	for name, l := range s.lingering {
		if now.Before(l.until) {
			continue
		}
		delete(s.lingering, name)
		out = append(out, xdsres.Change{TypeURL: typeCluster, Name: name})
		if l.cla != nil {
			out = append(out, xdsres.Change{TypeURL: typeEndpoint, Name: name})
		}
	}
	return out
}

// route decides between a route configuration's target and the version
// clients have (with a warm-up route for gRPC), and appends it to out. A
// new route configuration goes out at once; one that changes waits until
// every cluster it did not use before has been out for the warm-up.
func (s *stager) route(name string, tgt *xdsres.Resource, now time.Time, out []xdsres.Change) []xdsres.Change {
	cur, known := s.current[name]
	publish := func() []xdsres.Change {
		s.current[name] = tgt
		delete(s.pending, name)
		return append(out, xdsres.Change{TypeURL: typeRoute, Name: name, Resource: tgt})
	}
	if !known || cur == tgt {
		return publish()
	}
	// The version clients have is decoded once, for its clusters and for
	// the warm-up route.
	curRC, _ := cur.Decoded().(*envoy_config_route_v3.RouteConfiguration)
	warm := map[string]bool{}
	for _, c := range routeClusters(curRC) {
		warm[c] = true
	}
	w := s.pending[name]
	if w == nil {
		w = &wait{since: map[string]time.Time{}}
	}
	var cold []string
	var ready time.Time
	tgtRC, _ := tgt.Decoded().(*envoy_config_route_v3.RouteConfiguration)
	for _, c := range routeClusters(tgtRC) {
		if warm[c] {
			continue
		}
		since, ok := w.since[c]
		if !ok {
			since = now
			w.since[c] = now
		}
		if t := since.Add(s.warmup); now.Before(t) {
			cold = append(cold, c)
			if t.After(ready) {
				ready = t
			}
		}
	}
	if len(cold) == 0 {
		return publish()
	}
	w.ready = ready
	s.pending[name] = w
	return append(out, xdsres.Change{TypeURL: typeRoute, Name: name, Resource: s.warming(cur, curRC, cold)})
}

// warming is the version of a route configuration published while clusters
// warm up: the one clients have (cur, decoded as rc, nil when it does not
// decode), plus a warm-up route for gRPC.
func (s *stager) warming(cur *xdsres.Resource, rc *envoy_config_route_v3.RouteConfiguration, cold []string) *xdsres.Resource {
	if !s.warmupRoutes || rc == nil {
		return cur
	}
	r, err := xdsres.Encode(addWarmupRoute(rc, cold))
	if err != nil || Check(r) != nil {
		// Made after the gate: it must pass what the gate checks too.
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

// routeClusters lists the clusters a route configuration forwards to
// (none for nil).
func routeClusters(rc *envoy_config_route_v3.RouteConfiguration) []string {
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

// next reports when the next step is due (zero when nothing is pending):
// the end of a linger, or the time every cluster a pending route
// configuration waits for has warmed up.
func (s *stager) next(now time.Time) time.Time {
	if !s.staged {
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
	for _, w := range s.pending {
		later(w.ready)
	}
	return next
}
