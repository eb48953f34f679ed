package incremental

import (
	"cmp"
	"slices"
	"strings"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// ResourceRef names one resource a consumer group is served.
type ResourceRef struct {
	Group      xdsres.Group
	Type, Name string
}

// Compare orders references by group, type and name.
func (r ResourceRef) Compare(o ResourceRef) int {
	return cmp.Or(strings.Compare(string(r.Group), string(o.Group)), strings.Compare(r.Type, o.Type), strings.Compare(r.Name, o.Name))
}

// Owners returns the objects whose output contains a resource, sorted: for
// a host's route configurations, scope and gRPC listeners the root that
// owns the host name and every proxy that defines one of its routes; for
// a cluster and its load assignment the roots (and the proxies whose
// routes send to it) and ExtensionServices that use it, the Services it is
// made from and, for the load assignment, their EndpointSlices; for a DNS
// name the object that won it and the same Services and slices; for a
// secret the Secret and the objects that reference it. The HTTPS listener
// is owned by every root with a filter chain on it, the fallback route
// configuration by the owners of each host in it; the plain-HTTP
// listener by nobody.
//
// The answer is worked out from the units of the last build when asked,
// not kept up to date on every change: it is needed when a resource is
// rejected, which is rare, and the build path stays as fast as it was.
func (e *Engine) Owners(g xdsres.Group, typeURL, name string) []objects.Key {
	var o ownerSet
	switch {
	case typeURL == resource.RouteType && name == translator.FallbackRouteName && g == xdsres.GroupEnvoy:
		for _, r := range e.roots {
			if c := r.added; c != nil && c.winner && c.out.fallbackVH != nil {
				e.hostOwners(&o, c.res.FQDN)
			}
		}
	case typeURL == resource.RouteType || typeURL == resource.ScopedRouteType:
		for _, prefix := range []string{translator.HTTPSRouteName(""), translator.HTTPRouteName(""), translator.GRPCRouteName("")} {
			if fqdn, ok := strings.CutPrefix(name, prefix); ok {
				e.hostOwners(&o, fqdn)
				break
			}
		}
	case typeURL == resource.ListenerType && g == xdsres.GroupGRPC:
		// An API listener is named host:port; a server listener (the
		// host's RBAC for xDS-enabled gRPC servers) grpc-server/host/address.
		fqdn, _, _ := strings.Cut(name, ":")
		if rest, ok := strings.CutPrefix(name, translator.GRPCServerListenerPrefix); ok {
			fqdn, _, _ = strings.Cut(rest, "/")
		}
		e.hostOwners(&o, fqdn)
	case typeURL == resource.ListenerType && name == translator.HTTPSListenerName:
		for _, r := range e.roots {
			if c := r.added; c != nil && c.winner && c.out.chain != nil {
				o.add(rootKey(r.nn))
			}
		}
	case (typeURL == resource.ClusterType || typeURL == resource.EndpointType) && g == xdsres.GroupDNS:
		if d := e.shared.dns[name]; d != nil {
			o.add(d.winner.owner)
			if d.entry != nil {
				e.serviceOwners(&o, d.entry, typeURL == resource.EndpointType)
			}
		}
	case typeURL == resource.ClusterType || typeURL == resource.EndpointType:
		if ce := e.shared.clusters[name]; ce != nil {
			e.clusterOwners(&o, ce)
			e.serviceOwners(&o, ce, typeURL == resource.EndpointType)
		}
	case typeURL == resource.SecretType:
		if se := e.shared.secrets[name]; se != nil {
			e.secretOwners(&o, se.secret)
		}
	}
	return o.sorted()
}

// Produced returns the resources an object's output is part of, sorted:
// for a root everything its host serves, the clusters, load assignments,
// secrets and DNS names it uses; for an included proxy the same for every
// root that reads it; for an ExtensionService its cluster, load
// assignment, secrets and DNS name; for a Service the clusters and load
// assignments made from it, and for an EndpointSlice the load
// assignments; for a Secret the secrets made from it. Only resources
// currently in the targets are listed.
func (e *Engine) Produced(k objects.Key) []ResourceRef {
	var p produced
	nn := k.NamespacedName()
	switch k.Kind {
	case objects.KindHTTPProxy:
		if r := e.roots[nn]; r != nil {
			e.rootProduced(&p, r)
		}
		e.rootDeps.eachExact(k, func(u unit) { e.rootProduced(&p, u.(*rootUnit)) })
	case objects.KindExtensionService:
		if ext := e.exts[nn]; ext != nil && ext.Cluster != nil {
			e.clusterProduced(&p, ext.Cluster.Name, true)
			for _, s := range ext.Secrets {
				p.add(xdsres.GroupEnvoy, resource.SecretType, s.Name)
			}
			if cl := e.extClaims[nn]; cl != nil {
				e.dnsProduced(&p, cl)
			}
		}
	case objects.KindService:
		e.shared.byService.each(nn, func(ce *clusterEntry) { e.clusterProduced(&p, ce.cluster.Name, true) })
	case objects.KindEndpointSlice:
		if es := e.snap.EndpointSlices[nn]; es != nil {
			svc, _ := objects.SliceService(es)
			e.shared.byService.each(svc, func(ce *clusterEntry) { e.clusterProduced(&p, ce.cluster.Name, false) })
		}
	case objects.KindSecret:
		each := func(secrets []*dag.Secret) {
			for _, s := range secrets {
				if s.Source == nn {
					p.add(xdsres.GroupEnvoy, resource.SecretType, s.Name)
				}
			}
		}
		e.rootDeps.eachExact(k, func(u unit) {
			if r := u.(*rootUnit); r.added != nil && r.added.winner {
				each(r.res.Secrets)
			}
		})
		e.extDeps.eachExact(k, func(u unit) {
			if ext := e.exts[types.NamespacedName(u.(extUnit))]; ext != nil {
				each(ext.Secrets)
			}
		})
	}
	return p.sorted(e)
}

func rootKey(nn types.NamespacedName) objects.Key {
	return objects.NewKey(objects.KindHTTPProxy, nn)
}

// hostOwners adds the root that serves a host name and the proxies that
// define its routes.
func (e *Engine) hostOwners(o *ownerSet, fqdn string) {
	for _, r := range e.claims.fqdn[fqdn] {
		c := r.added
		if c == nil || !c.winner {
			continue
		}
		o.add(rootKey(r.nn))
		for _, vh := range vhostsOf(c.res) {
			for _, rt := range vh.Routes {
				o.add(rootKey(rt.Proxy))
			}
		}
	}
}

// clusterOwners adds the winning roots and the ExtensionServices that use
// a cluster, found through the Services it is made from (each of them
// read one), and the proxies whose routes send to it.
func (e *Engine) clusterOwners(o *ownerSet, ce *clusterEntry) {
	name := ce.cluster.Name
	for _, svc := range ce.services {
		k := objects.NewKey(objects.KindService, svc)
		e.rootDeps.eachExact(k, func(u unit) {
			r := u.(*rootUnit)
			if c := r.added; c == nil || !c.winner || !slices.ContainsFunc(c.res.Clusters, func(x *dag.Cluster) bool { return x.Name == name }) {
				return
			}
			o.add(rootKey(r.nn))
			for _, vh := range vhostsOf(r.added.res) {
				for _, rt := range vh.Routes {
					if routeUses(rt, name) {
						o.add(rootKey(rt.Proxy))
					}
				}
			}
		})
		e.extDeps.eachExact(k, func(u unit) {
			nn := types.NamespacedName(u.(extUnit))
			if ext := e.exts[nn]; ext != nil && ext.Cluster != nil && ext.Cluster.Name == name {
				o.add(objects.NewKey(objects.KindExtensionService, nn))
			}
		})
	}
}

// serviceOwners adds the Services a cluster is made from and, with
// slices, their EndpointSlices.
func (e *Engine) serviceOwners(o *ownerSet, ce *clusterEntry, slices bool) {
	for _, svc := range ce.services {
		o.add(objects.NewKey(objects.KindService, svc))
		if !slices {
			continue
		}
		for _, es := range e.snap.SlicesFor(svc) {
			o.add(objects.Key{Kind: objects.KindEndpointSlice, Namespace: es.Namespace, Name: es.Name})
		}
	}
}

// secretOwners adds a secret's Secret and the winning roots and
// ExtensionServices that reference it.
func (e *Engine) secretOwners(o *ownerSet, s *dag.Secret) {
	k := objects.NewKey(objects.KindSecret, s.Source)
	o.add(k)
	uses := func(list []*dag.Secret) bool {
		return slices.ContainsFunc(list, func(x *dag.Secret) bool { return x.Name == s.Name })
	}
	e.rootDeps.eachExact(k, func(u unit) {
		if r := u.(*rootUnit); r.added != nil && r.added.winner && uses(r.res.Secrets) {
			o.add(rootKey(r.nn))
		}
	})
	e.extDeps.eachExact(k, func(u unit) {
		nn := types.NamespacedName(u.(extUnit))
		if ext := e.exts[nn]; ext != nil && uses(ext.Secrets) {
			o.add(objects.NewKey(objects.KindExtensionService, nn))
		}
	})
}

// rootProduced adds what a winning root contributes.
func (e *Engine) rootProduced(p *produced, r *rootUnit) {
	c := r.added
	if c == nil || !c.winner {
		return
	}
	fqdn := c.res.FQDN
	out := c.out
	if out.scoped != nil {
		p.add(xdsres.GroupEnvoy, resource.ScopedRouteType, translator.HTTPRouteName(fqdn))
	}
	if out.http != nil {
		p.add(xdsres.GroupEnvoy, resource.RouteType, translator.HTTPRouteName(fqdn))
	}
	if out.https != nil {
		p.add(xdsres.GroupEnvoy, resource.RouteType, translator.HTTPSRouteName(fqdn))
	}
	if out.chain != nil {
		p.add(xdsres.GroupEnvoy, resource.ListenerType, translator.HTTPSListenerName)
	}
	if out.fallbackVH != nil {
		p.add(xdsres.GroupEnvoy, resource.RouteType, translator.FallbackRouteName)
	}
	if out.grpcRC != nil {
		p.add(xdsres.GroupGRPC, resource.RouteType, translator.GRPCRouteName(fqdn))
	}
	for _, l := range out.grpcLis {
		if l != nil {
			p.add(xdsres.GroupGRPC, resource.ListenerType, l.Name)
		}
	}
	for _, cl := range c.res.Clusters {
		e.clusterProduced(p, cl.Name, true)
	}
	for _, s := range c.res.Secrets {
		p.add(xdsres.GroupEnvoy, resource.SecretType, s.Name)
	}
	for _, cl := range c.dns {
		e.dnsProduced(p, cl)
	}
}

// clusterProduced adds a cluster's load assignment, in the Envoy and gRPC
// groups, and with withCluster the cluster itself.
func (e *Engine) clusterProduced(p *produced, name string, withCluster bool) {
	for _, g := range []xdsres.Group{xdsres.GroupEnvoy, xdsres.GroupGRPC} {
		if withCluster {
			p.add(g, resource.ClusterType, name)
		}
		p.add(g, resource.EndpointType, name)
	}
	if ce := e.shared.clusters[name]; ce != nil {
		for _, d := range ce.dns {
			dnsName := d.winner.name.Name
			if withCluster {
				p.add(xdsres.GroupDNS, resource.ClusterType, dnsName)
			}
			p.add(xdsres.GroupDNS, resource.EndpointType, dnsName)
		}
	}
}

// dnsProduced adds a DNS name's resources when the claim won it.
func (e *Engine) dnsProduced(p *produced, cl *dnsClaim) {
	if d := e.shared.dns[cl.name.Name]; d != nil && d.winner == cl {
		p.add(xdsres.GroupDNS, resource.ClusterType, cl.name.Name)
		p.add(xdsres.GroupDNS, resource.EndpointType, cl.name.Name)
	}
}

func vhostsOf(res *dag.RootResult) []*dag.VirtualHost {
	var out []*dag.VirtualHost
	if res.Insecure != nil {
		out = append(out, res.Insecure)
	}
	if res.Secure != nil {
		out = append(out, &res.Secure.VirtualHost)
	}
	return out
}

// routeUses reports whether a route sends requests, or copies of them, to
// the named cluster.
func routeUses(rt *dag.Route, name string) bool {
	f := rt.Forward
	if f == nil {
		return false
	}
	if (f.Cluster != nil && f.Cluster.Name == name) || (f.Merged != nil && f.Merged.Name == name) {
		return true
	}
	for _, w := range f.Weighted {
		if w.Cluster != nil && w.Cluster.Name == name {
			return true
		}
	}
	for _, m := range f.Mirrors {
		if m.Cluster != nil && m.Cluster.Name == name {
			return true
		}
	}
	return false
}

type ownerSet map[objects.Key]bool

func (o *ownerSet) add(k objects.Key) {
	if *o == nil {
		*o = ownerSet{}
	}
	(*o)[k] = true
}

func (o ownerSet) sorted() []objects.Key {
	out := make([]objects.Key, 0, len(o))
	for k := range o {
		out = append(out, k)
	}
	slices.SortFunc(out, objects.Key.Compare)
	return out
}

type produced map[ResourceRef]bool

func (p *produced) add(g xdsres.Group, typeURL, name string) {
	if *p == nil {
		*p = produced{}
	}
	(*p)[ResourceRef{Group: g, Type: typeURL, Name: name}] = true
}

// sorted lists the references that are in the engine's targets, by group,
// type and name.
func (p produced) sorted(e *Engine) []ResourceRef {
	out := make([]ResourceRef, 0, len(p))
	for r := range p {
		if e.Targets(r.Group)[r.Type].Get(r.Name) != nil {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, ResourceRef.Compare)
	return out
}

// Status returns one object's status as of the last build, nil when it
// has none: what Statuses lists, without listing them all.
func (e *Engine) Status(k objects.Key) *dag.Status {
	if e.degraded {
		list := e.ref.Statuses
		i, found := slices.BinarySearchFunc(list, k, func(st *dag.Status, k objects.Key) int { return st.Key.Compare(k) })
		if !found {
			return nil
		}
		return list[i]
	}
	return e.statuses.current[k]
}
