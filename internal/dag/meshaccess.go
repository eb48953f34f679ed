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
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// ErrTarget groups the problems of a TrafficTarget.
const ErrTarget = "TargetError"

// MeshAccess is who may call a mesh Service: the pod IPs that run as a
// source ServiceAccount of a TrafficTarget whose destination runs the
// Service's pods. A Service no TrafficTarget names has none (it is open);
// once one names it, only Sources may call it, and an empty Sources
// denies everyone.
type MeshAccess struct {
	// Targets are the TrafficTargets that apply, sorted.
	Targets []types.NamespacedName
	// Sources are single-address prefixes, sorted.
	Sources []netip.Prefix
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
func serviceAccountsOf(snap *objects.Snapshot, svc *corev1.Service) map[serviceAccount]bool {
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
	type grant struct {
		nn      types.NamespacedName
		sources []netip.Prefix
	}
	grants := map[serviceAccount][]grant{}
	for _, nn := range names {
		tt := snap.TrafficTargets[nn]
		st := &Status{Key: objects.NewKey(objects.KindTrafficTarget, nn), Generation: tt.Generation}
		dest, srcs := checkTarget(nn, tt, st)
		g := grant{nn: nn}
		// An invalid target still names its destination, which is then
		// closed to everyone: a mistake in an access rule must never open
		// what it was meant to guard.
		if len(st.Errors) == 0 {
			for _, sa := range srcs {
				g.sources = append(g.sources, podPrefixes(bySA[sa])...)
			}
		}
		if dest.Name != "" {
			grants[dest] = append(grants[dest], g)
		}
		st.finalize(objects.KindTrafficTarget.String())
		res.Statuses = append(res.Statuses, st)
	}
	for _, ms := range res.Services {
		var acc *MeshAccess
		for sa := range serviceAccountsOf(snap, snap.Services[ms.Service]) {
			for _, g := range grants[sa] {
				if acc == nil {
					acc = &MeshAccess{}
				}
				acc.Targets = append(acc.Targets, g.nn)
				acc.Sources = append(acc.Sources, g.sources...)
			}
		}
		if acc != nil {
			slices.SortFunc(acc.Targets, compareNN)
			acc.Targets = slices.Compact(acc.Targets)
			slices.SortFunc(acc.Sources, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })
			acc.Sources = slices.Compact(acc.Sources)
			ms.Access = acc
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
	for i, r := range tt.Spec.Rules {
		if len(r.Matches) > 0 {
			st.addError(ErrTarget, "UnsupportedRule", "%s.matches: allowing only some matches is not supported yet, so this target allows no one", fieldIndex("spec.rules", i))
		}
	}
	return dest, srcs
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
