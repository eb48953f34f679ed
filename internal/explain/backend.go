package explain

import (
	"net"
	"strconv"
	"strings"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
)

// Backend is one cluster a request may go to, with the share of the
// route's requests it gets and how it spreads them.
type Backend struct {
	Cluster string `json:"cluster"`
	// Weight is the share of the route's requests sent to this cluster, in
	// percent.
	Weight float64 `json:"weight"`
	// Problem is why this cluster answers every request it gets with 503.
	Problem string `json:"problem,omitempty"`
	// Unavailable is the share of the route's requests this cluster
	// answers with 503 (no healthy endpoint), in percent.
	Unavailable float64         `json:"unavailable,omitempty"`
	Priorities  []PriorityShare `json:"priorities,omitempty"`
}

// PriorityShare is one priority level of a cluster.
type PriorityShare struct {
	Priority uint32 `json:"priority"`
	// Load is the share of the cluster's requests this priority gets, in
	// percent, as Envoy computes it from the health of every priority.
	Load    int  `json:"load"`
	Healthy int  `json:"healthy"`
	Total   int  `json:"total"`
	Panic   bool `json:"panic,omitempty"`
	// Localities are this priority's localities, each with its share.
	Localities []LocalityShare `json:"localities"`
}

// LocalityShare is one locality of a priority.
type LocalityShare struct {
	Region  string `json:"region,omitempty"`
	Zone    string `json:"zone,omitempty"`
	SubZone string `json:"subZone,omitempty"`
	Weight  uint32 `json:"weight,omitempty"`
	// Share is the share of the route's requests this locality gets, in
	// percent.
	Share     float64         `json:"share"`
	Endpoints []EndpointShare `json:"endpoints"`
}

// EndpointShare is one endpoint and the share of the route's requests it
// gets, in percent.
type EndpointShare struct {
	Address string  `json:"address"`
	Health  string  `json:"health"`
	Weight  uint32  `json:"weight"`
	Share   float64 `json:"share"`
}

// weighted is one cluster of a route with its weight.
type weighted struct {
	name   string
	weight uint64
}

// problemNoCluster is the problem of a route's cluster that is not served.
const problemNoCluster = "cluster not served (Envoy answers 503, \"cluster not found\")"

// defaultOverprovisioning is Envoy's overprovisioning factor, in percent:
// a priority or locality with at least 1/1.4 of its endpoints healthy is
// treated as fully available.
const defaultOverprovisioning = 140

// backend explains one cluster that gets weight percent of the route's
// requests.
func (w *walk) backend(name string, weight float64) Backend {
	b := Backend{Cluster: name, Weight: weight}
	c := w.res.Clusters[name]
	if c == nil {
		b.Problem = problemNoCluster
		b.Unavailable = weight
		return b
	}
	cla := w.loadAssignment(c)
	if cla == nil {
		b.Problem = "no load assignment for this cluster: it has no endpoints"
		b.Unavailable = weight
		return b
	}
	if w.out.Group == "grpc" {
		b.Priorities = grpcShares(cla, weight)
	} else {
		b.Priorities = envoyShares(c, cla, weight)
	}
	spread := 0.0
	for _, p := range b.Priorities {
		for _, l := range p.Localities {
			spread += l.Share
		}
	}
	if u := weight - spread; u > 1e-9 {
		b.Unavailable = u
		if spread == 0 {
			b.Problem = "no healthy endpoint (Envoy answers 503, \"no healthy upstream\")"
		}
	}
	return b
}

func (w *walk) loadAssignment(c *envoy_config_cluster_v3.Cluster) *envoy_config_endpoint_v3.ClusterLoadAssignment {
	if la := c.GetLoadAssignment(); la != nil {
		return la
	}
	name := c.GetEdsClusterConfig().GetServiceName()
	if name == "" {
		name = c.GetName()
	}
	return w.res.Endpoints[name]
}

// health classes of an endpoint, as Envoy's load balancers see them.
const (
	healthy = iota
	degraded
	unhealthy
)

func healthClass(h envoy_config_core_v3.HealthStatus) int {
	switch h {
	case envoy_config_core_v3.HealthStatus_HEALTHY, envoy_config_core_v3.HealthStatus_UNKNOWN:
		return healthy
	case envoy_config_core_v3.HealthStatus_DEGRADED:
		return degraded
	}
	return unhealthy
}

// envoyShares computes how Envoy spreads a cluster's requests: priority
// load from each priority's health scaled by the overprovisioning factor
// (with spill to the next priority), then, with locality-weighted load
// balancing, localities by weight times availability, then endpoints by
// weight among the healthy ones — or among all, in panic mode.
func envoyShares(c *envoy_config_cluster_v3.Cluster, cla *envoy_config_endpoint_v3.ClusterLoadAssignment, weight float64) []PriorityShare {
	of := uint64(defaultOverprovisioning)
	if v := cla.GetPolicy().GetOverprovisioningFactor(); v != nil {
		of = uint64(v.GetValue())
	}
	panicAt := 50.0
	if t := c.GetCommonLbConfig().GetHealthyPanicThreshold(); t != nil {
		panicAt = t.GetValue()
	}
	localityWeighted := c.GetCommonLbConfig().GetLocalityWeightedLbConfig() != nil
	prios := byPriority(cla)
	loads, degLoads := priorityLoads(prios, of, panicAt)
	out := make([]PriorityShare, 0, len(prios))
	for i, p := range prios {
		ps := PriorityShare{Priority: p.priority, Load: int(loads[i] + degLoads[i]), Healthy: p.counts[healthy], Total: p.total}
		// Panic matters only where traffic goes.
		if p.total > 0 && panicAt > 0 && ps.Load > 0 {
			ps.Panic = 100*float64(p.counts[healthy]+p.counts[degraded])/float64(p.total) < panicAt
		}
		share := weight * float64(loads[i]) / 100
		switch {
		case ps.Panic:
			ps.Localities = spread(p.localities, share+weight*float64(degLoads[i])/100, func(int) bool { return true }, false, 0)
		default:
			ps.Localities = spread(p.localities, share, func(h int) bool { return h == healthy }, localityWeighted, of)
			if degLoads[i] > 0 {
				ps.Localities = addShares(ps.Localities, spread(p.localities, weight*float64(degLoads[i])/100, func(h int) bool { return h == degraded }, false, 0))
			}
		}
		out = append(out, ps)
	}
	return out
}

// priorityLoads is Envoy's priority load, in percent: each priority's
// health is min(100, overprovisioning × healthy/total); priorities take
// their health in order until 100 is reached, scaled up when all of them
// together have less; degraded endpoints take what healthy ones leave. With
// nothing healthy and panic on, priority 0 takes everything.
func priorityLoads(prios []*priority, of uint64, panicAt float64) (loads, degLoads []uint64) {
	health := make([]uint64, len(prios))
	deg := make([]uint64, len(prios))
	total := uint64(0)
	for i, p := range prios {
		if p.total > 0 {
			health[i] = min(100, of*uint64(p.counts[healthy])/uint64(p.total))
			deg[i] = min(100, of*uint64(p.counts[degraded])/uint64(p.total))
		}
		total += health[i] + deg[i]
	}
	total = min(100, total)
	loads = make([]uint64, len(prios))
	degLoads = make([]uint64, len(prios))
	if total == 0 {
		if len(prios) > 0 && panicAt > 0 {
			loads[0] = 100
		}
		return loads, degLoads
	}
	remaining := uint64(100)
	for i := range prios {
		loads[i] = min(remaining, health[i]*100/total)
		remaining -= loads[i]
	}
	for i := range prios {
		degLoads[i] = min(remaining, deg[i]*100/total)
		remaining -= degLoads[i]
	}
	// Integer rounding leaves a remainder; Envoy gives it to the first
	// priority with load.
	for i := range prios {
		if remaining > 0 && loads[i] > 0 {
			loads[i] += remaining
			remaining = 0
		}
	}
	return loads, degLoads
}

// grpcShares computes how grpc-go spreads a cluster's requests: the
// priority LB uses the first priority with a usable endpoint (no
// overprovisioning, no spill), weighted_target splits it across the
// localities that have one by locality weight, and round_robin spreads
// each locality evenly, ignoring endpoint weights.
func grpcShares(cla *envoy_config_endpoint_v3.ClusterLoadAssignment, weight float64) []PriorityShare {
	prios := byPriority(cla)
	out := make([]PriorityShare, 0, len(prios))
	chosen := false
	for _, p := range prios {
		ps := PriorityShare{Priority: p.priority, Healthy: p.counts[healthy], Total: p.total}
		share := 0.0
		if !chosen && p.counts[healthy] > 0 {
			chosen, ps.Load, share = true, 100, weight
		}
		ps.Localities = spread(p.localities, share, func(h int) bool { return h == healthy }, true, 0)
		evenWithin(ps.Localities)
		out = append(out, ps)
	}
	return out
}

// evenWithin replaces the weighted endpoint shares of each locality by
// equal ones among its endpoints with a share, as round_robin does.
func evenWithin(ls []LocalityShare) {
	for li := range ls {
		n := 0
		for _, e := range ls[li].Endpoints {
			if e.Share > 0 {
				n++
			}
		}
		for ei := range ls[li].Endpoints {
			if ls[li].Endpoints[ei].Share > 0 {
				ls[li].Endpoints[ei].Share = ls[li].Share / float64(n)
			}
		}
	}
}

type priority struct {
	priority   uint32
	total      int
	counts     [3]int
	localities []*envoy_config_endpoint_v3.LocalityLbEndpoints
}

// byPriority groups a load assignment's localities by priority, in
// priority order; a priority level that has no locality still counts, as
// an empty one.
func byPriority(cla *envoy_config_endpoint_v3.ClusterLoadAssignment) []*priority {
	var out []*priority
	for _, l := range cla.GetEndpoints() {
		for uint32(len(out)) <= l.GetPriority() {
			out = append(out, &priority{priority: uint32(len(out))})
		}
		p := out[l.GetPriority()]
		p.localities = append(p.localities, l)
		for _, e := range l.GetLbEndpoints() {
			p.total++
			p.counts[healthClass(e.GetHealthStatus())]++
		}
	}
	return out
}

// spread divides share among localities and their endpoints. With
// locality weighting, a locality's effective weight is its weight times
// min(1, overprovisioning × usable/total) (of 0: no overprovisioning, a
// locality with any usable endpoint counts fully); without, all endpoints
// of the priority form one pool. Endpoints share by load_balancing_weight.
func spread(ls []*envoy_config_endpoint_v3.LocalityLbEndpoints, share float64, usable func(int) bool, localityWeighted bool, of uint64) []LocalityShare {
	out := make([]LocalityShare, len(ls))
	pools := make([]float64, len(ls))
	eff := make([]float64, len(ls))
	var sumEff, sumPool float64
	for i, l := range ls {
		loc := l.GetLocality()
		out[i] = LocalityShare{Region: loc.GetRegion(), Zone: loc.GetZone(), SubZone: loc.GetSubZone(), Weight: l.GetLoadBalancingWeight().GetValue()}
		n, u := len(l.GetLbEndpoints()), 0
		for _, e := range l.GetLbEndpoints() {
			if usable(healthClass(e.GetHealthStatus())) {
				u++
				pools[i] += endpointWeight(e)
			}
		}
		sumPool += pools[i]
		if u == 0 {
			continue
		}
		avail := 1.0
		if of > 0 {
			avail = min(1, float64(of)/100*float64(u)/float64(n))
		}
		eff[i] = float64(out[i].Weight) * avail
		sumEff += eff[i]
	}
	for i, l := range ls {
		// perWeight is the share of one unit of endpoint weight here.
		perWeight := 0.0
		switch {
		case localityWeighted && sumEff > 0 && pools[i] > 0:
			perWeight = share * eff[i] / sumEff / pools[i]
		case !localityWeighted && sumPool > 0:
			perWeight = share / sumPool
		}
		for _, e := range l.GetLbEndpoints() {
			es := EndpointShare{Address: address(e), Health: e.GetHealthStatus().String(), Weight: uint32(endpointWeight(e))}
			if usable(healthClass(e.GetHealthStatus())) {
				es.Share = perWeight * endpointWeight(e)
				out[i].Share += es.Share
			}
			out[i].Endpoints = append(out[i].Endpoints, es)
		}
	}
	return out
}

// addShares adds the shares of b (the same localities) to a.
func addShares(a, b []LocalityShare) []LocalityShare {
	for i := range a {
		a[i].Share += b[i].Share
		for j := range a[i].Endpoints {
			a[i].Endpoints[j].Share += b[i].Endpoints[j].Share
		}
	}
	return a
}

func endpointWeight(e *envoy_config_endpoint_v3.LbEndpoint) float64 {
	if w := e.GetLoadBalancingWeight(); w != nil && w.GetValue() > 0 {
		return float64(w.GetValue())
	}
	return 1
}

func address(e *envoy_config_endpoint_v3.LbEndpoint) string {
	sa := e.GetEndpoint().GetAddress().GetSocketAddress()
	if sa == nil {
		return "(not a socket address)"
	}
	return net.JoinHostPort(sa.GetAddress(), strconv.FormatUint(uint64(sa.GetPortValue()), 10))
}

// describeLocality prints a locality as zone/sub-zone.
func describeLocality(l LocalityShare) string {
	parts := []string{}
	for _, s := range []string{l.Region, l.Zone, l.SubZone} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "(no locality)"
	}
	return strings.Join(parts, "/")
}
