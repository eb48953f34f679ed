package dag

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	specsv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/specs/v1alpha4"
	splitv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/split/v1alpha4"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// MeshAnnotation puts a Service in the mesh (objects.MeshAnnotation).
const MeshAnnotation = objects.MeshAnnotation

// ErrSplit groups the problems of a TrafficSplit.
const ErrSplit = "SplitError"

// MeshService is one Service of the mesh, with what its clients reach on
// each of its ports: the Service itself, or the backends of the
// TrafficSplit whose root it is.
type MeshService struct {
	Service types.NamespacedName
	// Name is "<service>.<namespace>", the name proxyless gRPC clients dial
	// and DNS answers below the mesh zone.
	Name string
	// Split is the TrafficSplit applied, nil when none is.
	Split *types.NamespacedName
	// Ports are sorted by port number.
	Ports []MeshPort
	// Access is nil when every caller may call the Service (no
	// TrafficTarget names its pods), else who may (meshaccess.go).
	Access *MeshAccess
}

// MeshPort is one TCP port of a mesh Service.
type MeshPort struct {
	Port int32
	// HTTP is set when the port's appProtocol says it speaks HTTP (http,
	// h2c, grpc); the node proxy routes those by Host and splits by
	// matches, the others are plain TCP.
	HTTP bool
	// Cluster is where requests no match selects go: the split's backends,
	// or the Service itself when the split has matches or there is none.
	Cluster *Cluster
	// Routes, from the split's matches, send the requests they match to
	// the split's backends; tried in order before Cluster.
	Routes []MeshRoute
}

// MeshRoute is one HTTPRouteGroup match of a split.
type MeshRoute struct {
	// Match names the HTTPRouteGroup and match: "<group>/<match>".
	Match string
	// PathRegex is "" for any path; Methods empty for any method.
	PathRegex string
	Methods   []string
	// Headers must all match; the values are regular expressions.
	Headers []HeaderMatch
	Cluster *Cluster
}

// MeshResult is the mesh's part of a build.
type MeshResult struct {
	Services []*MeshService
	// Statuses has one entry per TrafficSplit and TrafficTarget, sorted
	// by key.
	Statuses []*Status
}

// InMesh reports whether a Service is in the mesh, by its own annotation
// or, when it has none, its Namespace's.
func InMesh(snap *objects.Snapshot, svc *objects.Service) bool {
	if v, ok := svc.Annotations[MeshAnnotation]; ok {
		return v == "true"
	}
	ns := snap.Namespaces[svc.Namespace]
	return ns != nil && ns.Annotations[MeshAnnotation] == "true"
}

// BuildMesh selects the mesh from the snapshot: every mesh Service with
// the TrafficSplit on it applied. It reads Services, Namespaces,
// TrafficSplits, HTTPRouteGroups, TrafficTargets and Pods, never
// HTTPProxies: the mesh shares the DAG's clusters, not its virtual hosts.
func BuildMesh(snap *objects.Snapshot) *MeshResult {
	res := &MeshResult{}
	splits := splitsByRoot(snap, res)
	for _, svc := range sortedServices(snap) {
		if !InMesh(snap, svc) {
			continue
		}
		nn := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
		ms := &MeshService{Service: nn, Name: svc.Name + "." + svc.Namespace}
		sp := splits[nn]
		if sp != nil {
			ms.Split = &sp.nn
		}
		for _, p := range svc.Spec.Ports {
			if orTCP(p.Protocol) != corev1.ProtocolTCP {
				continue
			}
			mp := MeshPort{Port: p.Port, HTTP: httpAppProtocol(p)}
			self := NewCluster(meshSpec(p, []Backend{{Service: nn, Port: p.Port, Weight: 1}}))
			mp.Cluster = self
			if sp != nil && sp.valid {
				split := sp.cluster(snap, p)
				if len(sp.routes) == 0 {
					mp.Cluster = split
				}
				for _, r := range sp.routes {
					r.Cluster = split
					mp.Routes = append(mp.Routes, r)
				}
			}
			ms.Ports = append(ms.Ports, mp)
		}
		sort.Slice(ms.Ports, func(i, j int) bool { return ms.Ports[i].Port < ms.Ports[j].Port })
		if len(ms.Ports) > 0 {
			res.Services = append(res.Services, ms)
		}
	}
	for _, sp := range splits {
		if sp != nil && sp.valid {
			rootSvc := snap.Services[sp.root]
			if !InMesh(snap, rootSvc) {
				sp.status.addWarning(ErrSplit, "RootNotInMesh", "spec.service: Service %s is not in the mesh (annotate it or its namespace %s: \"true\"), so the split applies to no one", sp.root, MeshAnnotation)
			}
		}
	}
	for _, st := range res.Statuses {
		st.finalize(objects.KindTrafficSplit.String())
	}
	applyTargets(snap, res)
	sort.Slice(res.Statuses, func(i, j int) bool { return res.Statuses[i].Key.Less(res.Statuses[j].Key) })
	return res
}

func sortedServices(snap *objects.Snapshot) []*objects.Service {
	out := make([]*objects.Service, 0, len(snap.Services))
	for _, s := range snap.Services {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return lessObject(out[i].Namespace, out[i].Name, out[j].Namespace, out[j].Name) })
	return out
}

// httpAppProtocol reports whether a port declares HTTP; TCP is the
// default, as a port says nothing about what it speaks otherwise.
func httpAppProtocol(p corev1.ServicePort) bool {
	if p.AppProtocol == nil {
		return false
	}
	switch strings.ToLower(*p.AppProtocol) {
	case "http", "h2c", "kubernetes.io/h2c", "grpc", "http2":
		return true
	}
	return false
}

// meshSpec is the cluster spec of a mesh port's backends, with the
// defaults an HTTPProxy route without options gets, so that a split and a
// route over the same services share one cluster.
func meshSpec(p corev1.ServicePort, backends []Backend) ClusterSpec {
	sortBackends(backends)
	protocol := protocolFromAppProtocol(p)
	if a := p.AppProtocol; protocol == "" && a != nil && (strings.EqualFold(*a, "grpc") || strings.EqualFold(*a, "http2")) {
		// gRPC is HTTP/2 in the clear unless the port says tls; the node
		// proxy must not speak HTTP/1.1 to it.
		protocol = "h2c"
	}
	return ClusterSpec{Backends: mergeDuplicateBackends(backends), Protocol: protocol, LoadBalancer: LBRoundRobin}
}

// splitPlan is a TrafficSplit checked on its own.
type splitPlan struct {
	nn     types.NamespacedName
	root   types.NamespacedName
	status *Status
	valid  bool
	// weights are the backends with a weight above 0, sorted by name.
	weights []splitWeight
	routes  []MeshRoute
}

type splitWeight struct {
	svc    types.NamespacedName
	weight uint32
}

// cluster is the split's cluster for one port of its root: each backend's
// port of the same number, weighted.
func (sp *splitPlan) cluster(snap *objects.Snapshot, p corev1.ServicePort) *Cluster {
	backends := make([]Backend, 0, len(sp.weights))
	for _, w := range sp.weights {
		if hasPort(snap.Services[w.svc], p.Port) {
			backends = append(backends, Backend{Service: w.svc, Port: p.Port, Weight: w.weight})
		}
	}
	return NewCluster(meshSpec(p, backends))
}

func hasPort(svc *objects.Service, port int32) bool {
	if svc == nil {
		return false
	}
	for _, p := range svc.Spec.Ports {
		if p.Port == port && orTCP(p.Protocol) == corev1.ProtocolTCP {
			return true
		}
	}
	return false
}

// splitsByRoot checks every TrafficSplit and returns, per root Service,
// the one that applies: of two splits on one root, the first by name wins
// and the other is reported, so that adding a split never changes where
// an existing one sends traffic.
func splitsByRoot(snap *objects.Snapshot, res *MeshResult) map[types.NamespacedName]*splitPlan {
	names := make([]types.NamespacedName, 0, len(snap.TrafficSplits))
	for nn := range snap.TrafficSplits {
		names = append(names, nn)
	}
	sort.Slice(names, func(i, j int) bool {
		return lessObject(names[i].Namespace, names[i].Name, names[j].Namespace, names[j].Name)
	})
	out := map[types.NamespacedName]*splitPlan{}
	for _, nn := range names {
		ts := snap.TrafficSplits[nn]
		sp := checkSplit(snap, nn, ts)
		res.Statuses = append(res.Statuses, sp.status)
		if !sp.valid {
			continue
		}
		if prev := out[sp.root]; prev != nil {
			sp.status.addError(ErrSplit, "SplitConflict", "spec.service: Service %s is already split by TrafficSplit %s", sp.root, prev.nn)
			sp.valid = false
			continue
		}
		out[sp.root] = sp
	}
	return out
}

// checkSplit validates one TrafficSplit against the Services and route
// groups it names.
func checkSplit(snap *objects.Snapshot, nn types.NamespacedName, ts *splitv1alpha4.TrafficSplit) *splitPlan {
	st := &Status{Key: objects.NewKey(objects.KindTrafficSplit, nn), Generation: ts.Generation}
	sp := &splitPlan{nn: nn, root: types.NamespacedName{Namespace: nn.Namespace, Name: ts.Spec.Service}, status: st}
	if ts.Spec.Service == "" {
		st.addError(ErrSplit, "RootMissing", "spec.service: must name the root Service")
	} else if snap.Services[sp.root] == nil {
		st.addError(ErrSplit, "ServiceNotFound", "spec.service: Service %s not found", sp.root)
	}
	checkBackends(snap, sp, ts.Spec.Backends)
	for i, m := range ts.Spec.Matches {
		sp.routes = append(sp.routes, splitMatches(snap, st, nn.Namespace, i, m)...)
	}
	sp.valid = len(st.Errors) == 0
	return sp
}

func checkBackends(snap *objects.Snapshot, sp *splitPlan, backends []splitv1alpha4.TrafficSplitBackend) {
	st := sp.status
	if len(backends) == 0 {
		st.addError(ErrSplit, "NoBackends", "spec.backends: at least one backend is required")
	}
	var total int
	seen := map[string]bool{}
	for i, b := range backends {
		bn := types.NamespacedName{Namespace: sp.nn.Namespace, Name: b.Service}
		switch {
		case b.Service == "":
			st.addError(ErrSplit, "BackendMissing", "spec.backends[%d].service: must name a Service", i)
		case seen[b.Service]:
			st.addError(ErrSplit, "DuplicateBackend", "spec.backends[%d].service: Service %s is listed twice", i, bn)
		case snap.Services[bn] == nil:
			st.addError(ErrSplit, "ServiceNotFound", "spec.backends[%d].service: Service %s not found", i, bn)
		case snap.Services[sp.root] != nil && !sharesPort(snap.Services[sp.root], snap.Services[bn]):
			st.addError(ErrSplit, "ServicePortNotFound", "spec.backends[%d].service: Service %s has none of the ports of Service %s (it has %s)", i, bn, sp.root, servicePorts(snap.Services[bn]))
		}
		seen[b.Service] = true
		if b.Weight < 0 || b.Weight > 1<<20 {
			st.addError(ErrSplit, "InvalidWeight", "spec.backends[%d].weight: %d is not between 0 and %d", i, b.Weight, 1<<20)
			continue
		}
		total += b.Weight
		if b.Weight > 0 {
			sp.weights = append(sp.weights, splitWeight{svc: bn, weight: uint32(b.Weight)})
		}
	}
	if len(backends) > 0 && total == 0 {
		st.addError(ErrSplit, "InvalidWeight", "spec.backends: the weights sum to 0, so no backend would get traffic")
	}
}

func sharesPort(root, backend *objects.Service) bool {
	for _, p := range root.Spec.Ports {
		if orTCP(p.Protocol) == corev1.ProtocolTCP && hasPort(backend, p.Port) {
			return true
		}
	}
	return false
}

// splitMatches resolves one entry of spec.matches: an HTTPRouteGroup, all
// of its matches, in order.
func splitMatches(snap *objects.Snapshot, st *Status, ns string, i int, ref splitv1alpha4.MatchReference) []MeshRoute {
	if ref.Kind != "HTTPRouteGroup" || (ref.APIGroup != nil && *ref.APIGroup != specsv1alpha4.GroupName) {
		st.addError(ErrSplit, "UnsupportedMatch", "spec.matches[%d]: kind %q is not supported, only HTTPRouteGroup of %s", i, ref.Kind, specsv1alpha4.GroupName)
		return nil
	}
	g := snap.HTTPRouteGroups[types.NamespacedName{Namespace: ns, Name: ref.Name}]
	if g == nil {
		st.addError(ErrSplit, "RouteGroupNotFound", "spec.matches[%d].name: HTTPRouteGroup %s/%s not found", i, ns, ref.Name)
		return nil
	}
	var out []MeshRoute
	for j, m := range g.Spec.Matches {
		r, msg := routeGroupMatch(ref.Name, m)
		if msg != "" {
			st.addError(ErrSplit, "InvalidMatch", "HTTPRouteGroup %s/%s spec.matches[%d]: %s", ns, ref.Name, j, msg)
			continue
		}
		out = append(out, r)
	}
	return out
}

// routeGroupMatch is one match of an HTTPRouteGroup as the mesh reads it,
// for splits and TrafficTargets alike; msg, when not "", says which
// regular expression RE2 rejects.
func routeGroupMatch(group string, m specsv1alpha4.HTTPMatch) (r MeshRoute, msg string) {
	r = MeshRoute{Match: group + "/" + m.Name, PathRegex: m.PathRegex}
	for _, meth := range m.Methods {
		if meth == "*" {
			r.Methods = nil
			break
		}
		r.Methods = append(r.Methods, strings.ToUpper(meth))
	}
	for _, h := range slices.Sorted(maps.Keys(m.Headers)) {
		r.Headers = append(r.Headers, HeaderMatch{Name: strings.ToLower(h), Kind: MatchRegex, Value: m.Headers[h]})
	}
	return r, checkRegexes(r)
}

// checkRegexes rejects what Envoy's RE2 would: a NACK would take every
// route of the listener down with it.
func checkRegexes(r MeshRoute) string {
	if r.PathRegex != "" {
		if err := validateRegex(r.PathRegex); err != nil {
			return fmt.Sprintf("pathRegex: %v", err)
		}
	}
	for _, h := range r.Headers {
		if err := validateRegex(h.Value); err != nil {
			return fmt.Sprintf("headers[%s]: %v", h.Name, err)
		}
	}
	return ""
}
