package dag

import (
	"net/netip"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	accessv1alpha3 "github.com/switchyard-dev/switchyard/apis/smi/access/v1alpha3"
	specsv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/specs/v1alpha4"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// ErrTarget groups the problems of a TrafficTarget.
const ErrTarget = "TargetError"

// MeshAccess is who may call a mesh Service: the pod IPs that run as a
// source ServiceAccount of a TrafficTarget whose destination runs the
// Service's pods. A Service no TrafficTarget names has none (it is open);
// once one names it, only what its Policies allow is allowed, and a
// policy without sources allows no one.
type MeshAccess struct {
	// Targets are the TrafficTargets that apply, sorted.
	Targets []types.NamespacedName
	// Policies are what each of Targets allows, in the same order.
	Policies []MeshPolicy
}

// MeshPolicy is what one TrafficTarget allows: requests from Sources,
// any request with AnyRequest (the target has no rules), else those
// matching one of Requests, the HTTPRouteGroup matches its rules name.
// An invalid target has neither sources nor requests.
type MeshPolicy struct {
	Target types.NamespacedName
	// Sources are single-address prefixes, sorted.
	Sources    []netip.Prefix
	AnyRequest bool
	// Requests have no Cluster; a request matching one is allowed.
	Requests []MeshRoute
}

// serviceAccount is a namespace and ServiceAccount name.
type serviceAccount = types.NamespacedName

// podsBySA indexes the pods of the mesh namespaces by ServiceAccount.
// Pods elsewhere are never read: a caller outside the mesh has no
// identity the mesh knows, and is denied wherever a target applies.
func podsBySA(snap *objects.Snapshot, meshNS map[string]bool) map[serviceAccount][]*corev1.Pod {
	out := map[serviceAccount][]*corev1.Pod{}
	for _, p := range snap.Pods {
		if !meshNS[p.Namespace] {
			continue
		}
		out[podSA(p)] = append(out[podSA(p)], p)
	}
	return out
}

func podSA(p *corev1.Pod) serviceAccount {
	name := p.Spec.ServiceAccountName
	if name == "" {
		name = "default"
	}
	return serviceAccount{Namespace: p.Namespace, Name: name}
}

// meshNamespaces are the namespaces with a mesh Service or the mesh
// annotation.
func meshNamespaces(snap *objects.Snapshot, services []*MeshService) map[string]bool {
	out := map[string]bool{}
	for name, ns := range snap.Namespaces {
		if ns.Annotations[MeshAnnotation] == "true" {
			out[name] = true
		}
	}
	for _, ms := range services {
		out[ms.Service.Namespace] = true
	}
	return out
}

// serviceAccountsOf are the ServiceAccounts the pods a Service selects
// run as.
func serviceAccountsOf(snap *objects.Snapshot, svc *objects.Service) map[serviceAccount]bool {
	out := map[serviceAccount]bool{}
	if len(svc.Spec.Selector) == 0 {
		return out
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	for _, p := range snap.Pods {
		if p.Namespace == svc.Namespace && sel.Matches(labels.Set(p.Labels)) {
			out[podSA(p)] = true
		}
	}
	return out
}

// applyTargets checks every TrafficTarget and sets the access of the mesh
// Services whose pods are a destination.
func applyTargets(snap *objects.Snapshot, res *MeshResult) {
	meshNS := meshNamespaces(snap, res.Services)
	bySA := podsBySA(snap, meshNS)
	names := make([]types.NamespacedName, 0, len(snap.TrafficTargets))
	for nn := range snap.TrafficTargets {
		names = append(names, nn)
	}
	sort.Slice(names, func(i, j int) bool {
		return lessObject(names[i].Namespace, names[i].Name, names[j].Namespace, names[j].Name)
	})
	grants := map[serviceAccount][]MeshPolicy{}
	statuses := map[types.NamespacedName]*Status{}
	for _, nn := range names {
		tt := snap.TrafficTargets[nn]
		st := &Status{Key: objects.NewKey(objects.KindTrafficTarget, nn), Generation: tt.Generation}
		dest, srcs := checkTarget(nn, tt, st)
		anyRequest, requests := targetRequests(snap, nn, tt, st)
		g := MeshPolicy{Target: nn}
		// An invalid target still names its destination, which is then
		// closed to everyone: a mistake in an access rule must never open
		// what it was meant to guard.
		if len(st.Errors) == 0 {
			for _, sa := range srcs {
				g.Sources = append(g.Sources, podPrefixes(bySA[sa])...)
			}
			slices.SortFunc(g.Sources, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })
			g.Sources = slices.Compact(g.Sources)
			g.AnyRequest, g.Requests = anyRequest, requests
		}
		if dest.Name != "" {
			grants[dest] = append(grants[dest], g)
		}
		statuses[nn] = st
	}
	for _, ms := range res.Services {
		var policies []MeshPolicy
		for sa := range serviceAccountsOf(snap, snap.Services[ms.Service]) {
			policies = append(policies, grants[sa]...)
		}
		if len(policies) == 0 {
			continue
		}
		// A target has one destination, so it is here at most once.
		slices.SortFunc(policies, func(a, b MeshPolicy) int { return compareNN(a.Target, b.Target) })
		acc := &MeshAccess{Policies: policies}
		for _, p := range policies {
			acc.Targets = append(acc.Targets, p.Target)
			warnTCPRules(statuses[p.Target], ms, p)
		}
		ms.Access = acc
	}
	for _, nn := range names {
		statuses[nn].finalize(objects.KindTrafficTarget.String())
		res.Statuses = append(res.Statuses, statuses[nn])
	}
}

// warnTCPRules says where a target's rules cannot apply: a node proxy's
// TCP port forwards connections, which carry no request a rule could
// match, so the policy allows nothing there.
func warnTCPRules(st *Status, ms *MeshService, p MeshPolicy) {
	if p.AnyRequest || len(p.Sources) == 0 {
		return
	}
	for _, port := range ms.Ports {
		if !port.HTTP {
			st.addWarning(ErrTarget, "RulesOnTCPPort", "spec.rules: port %d of Service %s is TCP (its appProtocol is not HTTP), where no request can be matched, so the node proxy admits no connection of this target's sources there", port.Port, ms.Service)
		}
	}
}

func compareNN(a, b types.NamespacedName) int {
	switch {
	case a == b:
		return 0
	case lessObject(a.Namespace, a.Name, b.Namespace, b.Name):
		return -1
	}
	return 1
}

// checkTarget validates a TrafficTarget and returns its destination and
// sources.
func checkTarget(nn types.NamespacedName, tt *accessv1alpha3.TrafficTarget, st *Status) (serviceAccount, []serviceAccount) {
	subject := func(field string, s accessv1alpha3.IdentityBindingSubject) (serviceAccount, bool) {
		if s.Kind != "ServiceAccount" {
			st.addError(ErrTarget, "UnsupportedKind", "%s.kind: %q is not supported, only ServiceAccount", field, s.Kind)
			return serviceAccount{}, false
		}
		if s.Name == "" {
			st.addError(ErrTarget, "NameMissing", "%s.name: must name a ServiceAccount", field)
			return serviceAccount{}, false
		}
		ns := s.Namespace
		if ns == "" {
			ns = nn.Namespace
		}
		return serviceAccount{Namespace: ns, Name: s.Name}, true
	}
	dest, _ := subject("spec.destination", tt.Spec.Destination)
	var srcs []serviceAccount
	for i, s := range tt.Spec.Sources {
		if sa, ok := subject(fieldIndex("spec.sources", i), s); ok {
			srcs = append(srcs, sa)
		}
	}
	return dest, srcs
}

// targetRequests resolves a TrafficTarget's rules: no rules allow any
// request, else each rule allows the matches it names of an
// HTTPRouteGroup in the target's namespace (all of them when it names
// none).
func targetRequests(snap *objects.Snapshot, nn types.NamespacedName, tt *accessv1alpha3.TrafficTarget, st *Status) (anyRequest bool, requests []MeshRoute) {
	if len(tt.Spec.Rules) == 0 {
		return true, nil
	}
	for i, r := range tt.Spec.Rules {
		field := fieldIndex("spec.rules", i)
		if r.Kind != "HTTPRouteGroup" {
			st.addError(ErrTarget, "UnsupportedRule", "%s.kind: %q is not supported, only HTTPRouteGroup, so this target allows no one", field, r.Kind)
			continue
		}
		g := snap.HTTPRouteGroups[types.NamespacedName{Namespace: nn.Namespace, Name: r.Name}]
		if g == nil {
			st.addError(ErrTarget, "RouteGroupNotFound", "%s.name: HTTPRouteGroup %s/%s not found, so this target allows no one", field, nn.Namespace, r.Name)
			continue
		}
		byName := map[string]specsv1alpha4.HTTPMatch{}
		for _, m := range g.Spec.Matches {
			byName[m.Name] = m
		}
		wanted := r.Matches
		if len(wanted) == 0 {
			for _, m := range g.Spec.Matches {
				wanted = append(wanted, m.Name)
			}
		}
		for j, name := range wanted {
			m, ok := byName[name]
			if !ok {
				st.addError(ErrTarget, "MatchNotFound", "%s.matches[%d]: HTTPRouteGroup %s/%s has no match %q", field, j, nn.Namespace, r.Name, name)
				continue
			}
			req, msg := routeGroupMatch(r.Name, m)
			if msg != "" {
				st.addError(ErrTarget, "InvalidMatch", "%s: HTTPRouteGroup %s/%s match %q: %s", field, nn.Namespace, r.Name, name, msg)
				continue
			}
			requests = append(requests, req)
		}
	}
	return false, requests
}

func fieldIndex(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

// podPrefixes are the pods' IPs as single-address prefixes; pods without
// an IP yet, or with one that does not parse, add none.
func podPrefixes(pods []*corev1.Pod) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range pods {
		for _, ip := range p.Status.PodIPs {
			if a, err := netip.ParseAddr(ip.IP); err == nil {
				out = append(out, netip.PrefixFrom(a, a.BitLen()))
			}
		}
	}
	return out
}
