package incremental

import (
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// contribution is what a root added to the build, kept so that it can be
// taken back exactly.
type contribution struct {
	res *dag.RootResult
	// winner is set when the root owns its host name (or has none); a
	// losing root contributes its own status and the DuplicateFQDN error.
	winner bool
	owner  types.NamespacedName
	// statuses are the root's statuses (rootUnit.statuses) as added.
	statuses []*dag.Status
	dns      []*dnsClaim
	// out is the translation a winner put into the build, which is what
	// retracting it removes.
	out *rootOutput
}

// rootOutput is the translation of one root's result: its route
// configurations, HTTPS filter chain and gRPC resources, encoded.
type rootOutput struct {
	scoped      *xdsres.Resource
	http        *xdsres.Resource
	https       *xdsres.Resource
	chain       []byte
	grpcRC      *xdsres.Resource
	grpcLis     []*xdsres.Resource
	grpcCluster []*dag.Cluster
	// jwks are the host's own JWKS clusters (envoy group).
	jwks []*xdsres.Resource
	// fallbackVH is the host's encoded virtual host in the fallback route
	// configuration, nil when it does not use the fallback certificate;
	// fallbackSecret is then the certificate's name.
	fallbackVH     []byte
	fallbackSecret string
	// err is the first encoding error; what failed is left out.
	err error
}

// addRoots indexes what the rebuilt roots read and adds what the roots of
// list contribute. The first update splits that over two goroutines: at
// tens of thousands of roots it is most of what runs on one core while the
// other idles. The index and the roots' own resources (putRootResources)
// share nothing with the rest of a contribution, and in the first update
// setting a resource writes nothing but its type's map (Engine.set); later
// updates, which also record what they replace, add on one goroutine.
func (e *Engine) addRoots(rebuilt, list []*rootUnit) {
	if !e.u.initial {
		e.indexRoots(rebuilt)
		for _, r := range list {
			if r.res != nil {
				e.addRoot(r)
				e.putOwnResources(r)
			}
		}
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.indexRoots(rebuilt)
		for _, r := range list {
			if r.res != nil {
				e.putOwnResources(r)
			}
		}
	}()
	for _, r := range list {
		if r.res != nil {
			e.addRoot(r)
		}
	}
	<-done
}

// putOwnResources sets the resources of a root that owns its host name.
// It reads only what settleFQDNs settled, so that it may run beside
// addRoot.
func (e *Engine) putOwnResources(r *rootUnit) {
	if winner, _ := e.claims.standing(r); winner {
		e.putRootResources(r.res, r.out)
	}
}

// addRoot adds what a root contributes given its standing on its host
// name, but for its own resources (putOwnResources).
func (e *Engine) addRoot(r *rootUnit) {
	res := r.res
	winner, owner := e.claims.standing(r)
	c := &contribution{res: res, winner: winner, statuses: r.statuses}
	r.added = c
	key := objects.NewKey(objects.KindHTTPProxy, r.nn)
	if !winner {
		c.owner = owner.nn
		e.statuses.addPart(key, r, statusOf(r.statuses, key))
		e.statuses.lostFQDN[key] = dag.DuplicateFQDN(res.FQDN, c.owner)
		return
	}
	for _, st := range r.statuses {
		e.statuses.addPart(st.Key, r, st)
	}
	for _, cl := range res.Clusters {
		e.refCluster(cl)
	}
	for _, s := range res.Secrets {
		e.refSecret(s)
	}
	out := e.output(r)
	c.out = out
	for _, cl := range out.grpcCluster {
		e.refGRPCCluster(cl)
	}
	for i, n := range res.DNSNames {
		cl := &dnsClaim{name: n, owner: key, root: res, index: i}
		c.dns = append(c.dns, cl)
		e.claims.addDNS(cl)
	}
}

// statusOf is the status of k in list, nil when there is none.
func statusOf(list []*dag.Status, k objects.Key) *dag.Status {
	for _, st := range list {
		if st.Key == k {
			return st
		}
	}
	return nil
}

// retractRoot takes back what a root contributed.
func (e *Engine) retractRoot(r *rootUnit) {
	c := r.added
	if c == nil {
		return
	}
	r.added = nil
	key := objects.NewKey(objects.KindHTTPProxy, r.nn)
	if !c.winner {
		e.statuses.removePart(key, r)
		delete(e.statuses.lostFQDN, key)
		return
	}
	res := c.res
	for _, st := range c.statuses {
		e.statuses.removePart(st.Key, r)
	}
	for _, cl := range c.dns {
		e.claims.removeDNS(cl)
	}
	out := c.out
	for _, cl := range out.grpcCluster {
		e.unrefGRPCCluster(cl)
	}
	e.removeRootResources(res, out)
	for _, s := range res.Secrets {
		e.unrefSecret(s)
	}
	for _, cl := range res.Clusters {
		e.unrefCluster(cl)
	}
}

// output returns the translation of a root's current result, made by
// rebuildRoots in its parallel phase, recording its encoding error.
func (e *Engine) output(r *rootUnit) *rootOutput {
	if r.out.err != nil && e.u.err == nil {
		e.u.err = r.out.err
	}
	return r.out
}

// translateRoot translates and encodes what one root serves: the same
// per-host resources translator.Envoy and translator.GRPC make. It reads
// nothing but its arguments, so roots are translated in parallel.
func translateRoot(res *dag.RootResult, opts translator.Options, inspect InspectFunc) *rootOutput {
	out := &rootOutput{}
	enc := func(m proto.Message) *xdsres.Resource {
		r := encodeInspected(m, inspect)
		if r.err != nil && out.err == nil {
			out.err = r.err
		}
		return r.res
	}
	// The host's route configurations name the same owners: one message
	// each, for all of them.
	var owners translator.Owners
	if vh := res.Insecure; vh != nil {
		out.scoped = enc(translator.ScopedRoute(vh))
		out.http = enc(owners.HTTPRouteConfig(vh))
	}
	if svh := res.Secure; svh != nil {
		if rc := owners.HTTPSRouteConfig(svh); rc != nil {
			out.https = enc(rc)
		}
		for _, c := range translator.JWKSClusters(svh, opts) {
			out.jwks = append(out.jwks, enc(c))
		}
		if fc := translator.HTTPSFilterChain(svh); fc != nil {
			b, err := xdsres.Marshal(fc)
			if err != nil && out.err == nil {
				out.err = err
			}
			out.chain = b
		}
		b, err := encodeFallbackVirtualHost(svh)
		if err != nil && out.err == nil {
			out.err = err
		}
		if b != nil {
			out.fallbackVH, out.fallbackSecret = b, svh.FallbackCertificate.Name
		}
	}
	if res.Insecure == nil && res.Secure == nil {
		return out
	}
	h := translator.GRPCHost{FQDN: res.FQDN, Plain: res.Insecure, Secure: res.Secure}
	if rc := owners.GRPCRouteConfig(h); rc != nil {
		out.grpcRC = enc(rc)
		// A host has several of each: one list of the right size, not
		// one grown by doubling, for every root.
		api, server := translator.GRPCListeners(h), translator.GRPCServerListeners(h)
		out.grpcLis = make([]*xdsres.Resource, 0, len(api)+len(server))
		for _, l := range api {
			out.grpcLis = append(out.grpcLis, enc(l))
		}
		for _, l := range server {
			out.grpcLis = append(out.grpcLis, enc(l))
		}
		out.grpcCluster = translator.GRPCClusters(h)
	}
	return out
}

func (e *Engine) putRootResources(res *dag.RootResult, out *rootOutput) {
	e.rootResources(res, out, false)
}

func (e *Engine) removeRootResources(res *dag.RootResult, out *rootOutput) {
	e.rootResources(res, out, true)
}

// rootResources sets (or, with remove, deletes) a root's own resources.
func (e *Engine) rootResources(res *dag.RootResult, out *rootOutput, remove bool) {
	put := func(g xdsres.Group, t, name string, r *xdsres.Resource) {
		if r == nil {
			return
		}
		if remove {
			r = nil
		}
		e.set(g, t, name, r)
	}
	fqdn := res.FQDN
	if res.Insecure != nil || res.Secure != nil {
		e.mark(e.dirty.hosts, fqdn)
	}
	if out.scoped != nil {
		e.plain.set(fqdn, !remove)
		var rl *dag.RateLimitService
		if !remove && res.Insecure != nil {
			rl = res.Insecure.RateLimitService
		}
		e.plain.setRateLimit(fqdn, rl)
	}
	put(xdsres.GroupEnvoy, resource.ScopedRouteType, translator.HTTPRouteName(fqdn), out.scoped)
	put(xdsres.GroupEnvoy, resource.RouteType, translator.HTTPRouteName(fqdn), out.http)
	put(xdsres.GroupEnvoy, resource.RouteType, translator.HTTPSRouteName(fqdn), out.https)
	put(xdsres.GroupGRPC, resource.RouteType, translator.GRPCRouteName(fqdn), out.grpcRC)
	for _, c := range out.jwks {
		if c != nil {
			put(xdsres.GroupEnvoy, resource.ClusterType, c.Name, c)
		}
	}
	for _, l := range out.grpcLis {
		if l != nil {
			put(xdsres.GroupGRPC, resource.ListenerType, l.Name, l)
		}
	}
	if out.chain != nil {
		if remove {
			e.https.remove(fqdn)
		} else {
			e.https.put(fqdn, out.chain)
		}
	}
	if out.fallbackVH != nil {
		if remove {
			e.fallback.remove(fqdn)
		} else {
			e.fallback.put(fqdn, out.fallbackVH, out.fallbackSecret)
		}
	}
}

// addExtension adds what an ExtensionService contributes: its status and,
// when valid, its cluster, secrets and DNS name.
func (e *Engine) addExtension(ext *dag.ExtensionResult) {
	key := objects.NewKey(objects.KindExtensionService, ext.Name)
	e.statuses.addPart(key, extUnit(ext.Name), ext.Status)
	if ext.Cluster == nil {
		return
	}
	e.refCluster(ext.Cluster)
	for _, s := range ext.Secrets {
		e.refSecret(s)
	}
	e.claims.addDNS(e.extClaim(ext))
}

func (e *Engine) retractExtension(nn types.NamespacedName, ext *dag.ExtensionResult) {
	if ext == nil {
		return
	}
	key := objects.NewKey(objects.KindExtensionService, nn)
	e.statuses.removePart(key, extUnit(nn))
	if ext.Cluster == nil {
		return
	}
	e.claims.removeDNS(e.extClaims[nn])
	delete(e.extClaims, nn)
	for _, s := range ext.Secrets {
		e.unrefSecret(s)
	}
	e.unrefCluster(ext.Cluster)
}

func (e *Engine) extClaim(ext *dag.ExtensionResult) *dnsClaim {
	key := objects.NewKey(objects.KindExtensionService, ext.Name)
	cl := &dnsClaim{name: dag.DNSName{Name: dag.ExtensionDNSName(ext.Name), Cluster: ext.Cluster}, owner: key}
	e.extClaims[ext.Name] = cl
	return cl
}
