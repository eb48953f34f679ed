package console

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/explain"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// view is what the pages show, derived from the served resources and the
// statuses of one build. Deriving it walks every route configuration, so
// it is computed once per change and shared by every request until the
// next (views).
type view struct {
	hosts   []*host // sorted by name
	byHost  map[string]*host
	byProxy map[string]*produced // "namespace/name" of an HTTPProxy
	// statuses by "Kind/namespace/name", in the statuses' order.
	statuses []*dag.Status
	byKey    map[string]*dag.Status
	clusters map[string]bool
}

// produced is what one HTTPProxy contributes to the served resources.
type produced struct {
	Hosts    []string `json:"hosts"`
	Clusters []string `json:"clusters"`
}

// host is one virtual host: the routes of its HTTPS route configuration,
// or of its HTTP one when it has no TLS.
type host struct {
	Name         string   `json:"name"`
	Proxy        string   `json:"proxy,omitempty"`
	RouteConfigs []string `json:"routeConfigs"`
	Routes       []route  `json:"routes"`
	Broken       int      `json:"broken"`
}

// route is one Envoy route, in the virtual host's match order.
type route struct {
	Name   string `json:"name"`
	Match  string `json:"match"`
	Action string `json:"action"`
	// Clusters are the cluster names traffic goes to, with their weights
	// when the route splits.
	Clusters []weighted `json:"clusters,omitempty"`
	// Proxy and Index name the HTTPProxy and spec.routes entry that wrote
	// the route, from the route's metadata.
	Proxy string `json:"proxy,omitempty"`
	Index int    `json:"index"`
	// Problem says why traffic on this route fails, and Field which field
	// of Proxy to fix, when the status names one.
	Broken  bool   `json:"broken"`
	Field   string `json:"field,omitempty"`
	Problem string `json:"problem,omitempty"`
}

type weighted struct {
	Name   string `json:"name"`
	Weight uint32 `json:"weight,omitempty"`
}

// views caches the current view, keyed by what it was derived from, and
// the load assignments by name, keyed by their type's version: endpoints
// change without a rebuild, and more often.
type views struct {
	cache    *xdscache.Cache
	statuses func() []*dag.Status
	mu       sync.Mutex
	key      string
	last     *view

	edsVersion string
	eds        map[string]*xdsres.Resource
}

// assignment returns the served load assignment of a cluster, nil when
// there is none.
func (vs *views) assignment(name string) *xdsres.Resource {
	v := vs.cache.Version(xdsres.GroupEnvoy, resource.EndpointType)
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.eds == nil || vs.edsVersion != v {
		vs.eds, vs.edsVersion = map[string]*xdsres.Resource{}, v
		for _, r := range vs.cache.Resources(xdsres.GroupEnvoy, resource.EndpointType) {
			vs.eds[r.Name] = r
		}
	}
	return vs.eds[name]
}

func newViews(cache *xdscache.Cache, statuses func() []*dag.Status) *views {
	return &views{cache: cache, statuses: statuses}
}

// current returns the view of what is served now.
func (vs *views) current() *view {
	sts := vs.statuses()
	g := xdsres.GroupEnvoy
	key := vs.cache.Version(g, resource.RouteType) + "/" + vs.cache.Version(g, resource.ClusterType)
	if len(sts) > 0 {
		key += fmt.Sprintf("/%p/%d", sts[0], len(sts))
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.last == nil || vs.key != key {
		vs.last, vs.key = buildView(vs.cache, sts), key
	}
	return vs.last
}

func buildView(c *xdscache.Cache, sts []*dag.Status) *view {
	v := &view{byHost: map[string]*host{}, byProxy: map[string]*produced{}, statuses: sts, byKey: map[string]*dag.Status{}, clusters: map[string]bool{}}
	for _, st := range sts {
		v.byKey[st.Key.Kind.String()+"/"+st.Key.Namespace+"/"+st.Key.Name] = st
	}
	// A resource's name is its cluster's: no need to decode 10,000 clusters.
	for _, r := range c.Resources(xdsres.GroupEnvoy, resource.ClusterType) {
		v.clusters[r.Name] = true
	}
	for _, r := range c.Resources(xdsres.GroupEnvoy, resource.RouteType) {
		rc, ok := r.Decoded().(*envoy_config_route_v3.RouteConfiguration)
		if !ok {
			continue
		}
		for _, vh := range rc.GetVirtualHosts() {
			v.addVirtualHost(rc.GetName(), vh)
		}
	}
	for _, h := range v.byHost {
		v.hosts = append(v.hosts, h)
	}
	slices.SortFunc(v.hosts, func(a, b *host) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range v.byProxy {
		slices.Sort(p.Clusters)
		p.Clusters = slices.Compact(p.Clusters)
		slices.Sort(p.Hosts)
		p.Hosts = slices.Compact(p.Hosts)
	}
	return v
}

// addVirtualHost records one virtual host of a route configuration. The
// HTTPS configuration's routes win over the HTTP one's, which on a TLS
// host only redirect.
func (v *view) addVirtualHost(rcName string, vh *envoy_config_route_v3.VirtualHost) {
	h := v.byHost[vh.GetName()]
	if h == nil {
		h = &host{Name: vh.GetName(), Proxy: ownerOf(vh.GetMetadata())}
		v.byHost[h.Name] = h
	}
	h.RouteConfigs = append(h.RouteConfigs, rcName)
	if h.Routes != nil && !strings.HasPrefix(rcName, "https/") {
		return
	}
	h.Routes, h.Broken = nil, 0
	for _, r := range vh.GetRoutes() {
		rt := v.route(r)
		if rt.Broken {
			h.Broken++
		}
		h.Routes = append(h.Routes, rt)
		if rt.Proxy != "" {
			p := v.producedBy(rt.Proxy)
			p.Hosts = append(p.Hosts, h.Name)
			for _, c := range rt.Clusters {
				p.Clusters = append(p.Clusters, c.Name)
			}
		}
	}
	if h.Routes == nil {
		h.Routes = []route{}
	}
	if h.Proxy != "" {
		v.producedBy(h.Proxy).Hosts = append(v.producedBy(h.Proxy).Hosts, h.Name)
	}
}

func (v *view) producedBy(proxy string) *produced {
	p := v.byProxy[proxy]
	if p == nil {
		p = &produced{Hosts: []string{}, Clusters: []string{}}
		v.byProxy[proxy] = p
	}
	return p
}

// route describes one Envoy route, and when it cannot carry traffic, why,
// from the status of the HTTPProxy that wrote it.
func (v *view) route(r *envoy_config_route_v3.Route) route {
	proxy, index := translator.MetadataOwner(r.GetMetadata())
	out := route{Name: r.GetName(), Match: explain.DescribeMatch(r.GetMatch()), Proxy: proxy, Index: index}
	switch a := r.GetAction().(type) {
	case *envoy_config_route_v3.Route_Route:
		out.Action = "route"
		if c := a.Route.GetCluster(); c != "" {
			out.Clusters = []weighted{{Name: c}}
		}
		for _, wc := range a.Route.GetWeightedClusters().GetClusters() {
			out.Clusters = append(out.Clusters, weighted{Name: wc.GetName(), Weight: wc.GetWeight().GetValue()})
		}
		for _, c := range out.Clusters {
			if !v.clusters[c.Name] {
				out.Broken, out.Problem = true, "cluster "+c.Name+" is not served"
			}
		}
	case *envoy_config_route_v3.Route_Redirect:
		out.Action = "redirect"
	case *envoy_config_route_v3.Route_DirectResponse:
		out.Action = fmt.Sprintf("direct response %d", a.DirectResponse.GetStatus())
		if a.DirectResponse.GetStatus() >= 500 {
			out.Broken = true
			out.Problem = a.DirectResponse.GetBody().GetInlineString()
		}
	default:
		out.Action = "other"
	}
	if out.Broken {
		v.explainBroken(&out)
	}
	return out
}

// explainBroken replaces a broken route's problem with the error its
// HTTPProxy's status gives for the route's spec.routes entry, which names
// the field to fix.
func (v *view) explainBroken(r *route) {
	ns, name, ok := strings.Cut(r.Proxy, "/")
	if !ok || r.Index < 0 {
		return
	}
	st := v.byKey["HTTPProxy/"+ns+"/"+name]
	if st == nil {
		return
	}
	prefix := fmt.Sprintf("spec.routes[%d]", r.Index)
	for _, e := range st.Errors {
		if strings.HasPrefix(e.Message, prefix) {
			r.Field, _, _ = strings.Cut(e.Message, ":")
			r.Problem = e.Message
			return
		}
	}
}

// ownerOf returns the HTTPProxy named in Switchyard's metadata of a
// virtual host or route.
func ownerOf(md *envoy_config_core_v3.Metadata) string {
	proxy, _ := translator.MetadataOwner(md)
	return proxy
}
