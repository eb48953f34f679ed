package dag

import (
	"fmt"
	"reflect"
	"sort"

	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// Assemble joins the per-root and per-ExtensionService results into the
// DAG. It settles what no single unit can: which root owns a contested
// FQDN, which proxies no root reaches, and which DNS name goes where. It
// never modifies its inputs, so an incremental build can reuse them.
func Assemble(snap *objects.Snapshot, opts Options, roots []*RootResult, exts Extensions) *Result {
	a := &assembler{
		statuses: statusSet{},
		clusters: map[string]*Cluster{},
		secrets:  map[string]*Secret{},
		dns:      map[string]DNSName{},
		d:        &DAG{},
	}
	a.extensions(exts)
	for _, r := range claimOrder(roots) {
		a.root(r)
	}
	a.orphans(snap, opts)
	a.delegations(snap)
	return a.result()
}

type assembler struct {
	statuses statusSet
	clusters map[string]*Cluster
	secrets  map[string]*Secret
	dns      map[string]DNSName
	claimed  map[string]*RootResult
	d        *DAG
}

// claimOrder sorts roots so that the oldest claim on an FQDN comes first:
// a new proxy can never take a host name away from one already serving it.
func claimOrder(roots []*RootResult) []*RootResult {
	out := append([]*RootResult(nil), roots...)
	sort.SliceStable(out, func(i, j int) bool { return ClaimsBefore(out[i], out[j]) })
	return out
}

// ClaimsBefore reports whether root a's claim on a host name (or a DNS
// name) comes before b's: the older proxy first, then by namespace and
// name.
func ClaimsBefore(a, b *RootResult) bool {
	if !a.Created.Equal(&b.Created) {
		return a.Created.Before(&b.Created)
	}
	return lessObject(a.Root.Namespace, a.Root.Name, b.Root.Namespace, b.Root.Name)
}

// DuplicateFQDN is the error of a root whose host name an older root
// already serves.
func DuplicateFQDN(fqdn string, owner types.NamespacedName) switchyardv1.SubCondition {
	return switchyardv1.SubCondition{Type: ErrVirtualHost, Reason: "DuplicateFQDN", Message: fmt.Sprintf("spec.virtualhost.fqdn: %q is already served by HTTPProxy %s", fqdn, owner)}
}

// DNSNameTaken is the warning of an object whose DNS name an object that
// claimed it first uses for another cluster.
func DNSNameTaken(name string) switchyardv1.SubCondition {
	return switchyardv1.SubCondition{Type: ErrSpec, Reason: "DNSNameTaken", Message: fmt.Sprintf("DNS name %q is already used by another object; it keeps pointing there", name)}
}

// ClusterNameClash is the error of a root one of whose backend sets hashes
// to the name of a different one.
func ClusterNameClash() switchyardv1.SubCondition {
	return switchyardv1.SubCondition{Type: ErrSpec, Reason: "ClusterNameClash", Message: "spec: two different backend sets hash to the same cluster name; rename a Service to work around it"}
}

// ExtensionDNSName is the DNS name of a valid ExtensionService's cluster.
func ExtensionDNSName(nn types.NamespacedName) string { return nn.Name + "." + nn.Namespace }

func (a *assembler) root(r *RootResult) {
	rootKey := objects.NewKey(objects.KindHTTPProxy, r.Root)
	if a.claimed == nil {
		a.claimed = map[string]*RootResult{}
	}
	if owner, taken := a.claimed[r.FQDN]; taken && r.FQDN != "" {
		st := a.merge(rootKey, r.Statuses[rootKey])
		st.Errors = append(st.Errors, DuplicateFQDN(r.FQDN, owner.Root))
		return
	}
	if r.FQDN != "" {
		a.claimed[r.FQDN] = r
	}
	for _, k := range sortedKeys(r.Statuses) {
		a.merge(k, r.Statuses[k])
	}
	if !a.addClusters(r.Clusters) {
		st := a.statuses[rootKey]
		st.Errors = append(st.Errors, ClusterNameClash())
		return
	}
	for _, s := range r.Secrets {
		a.secrets[s.Name] = s
	}
	if r.Insecure != nil {
		a.d.VirtualHosts = append(a.d.VirtualHosts, r.Insecure)
	}
	if r.Secure != nil {
		a.d.SecureVirtualHosts = append(a.d.SecureVirtualHosts, r.Secure)
	}
	for _, n := range r.DNSNames {
		a.addDNS(n, rootKey)
	}
}

// merge folds a unit's status for key into the assembled one, copying so
// the unit's own status is never modified.
func (a *assembler) merge(key objects.Key, src *Status) *Status {
	dst, ok := a.statuses[key]
	if !ok {
		dst = &Status{Key: key}
		a.statuses[key] = dst
	}
	if src != nil {
		mergeStatus(dst, src)
	}
	return dst
}

// addClusters adds a unit's clusters, refusing all of them if any name is
// already used by a different spec.
func (a *assembler) addClusters(cs []*Cluster) bool {
	for _, c := range cs {
		if prev, ok := a.clusters[c.Name]; ok && prev != c && !reflect.DeepEqual(prev.Spec, c.Spec) {
			return false
		}
	}
	for _, c := range cs {
		if _, ok := a.clusters[c.Name]; !ok {
			a.clusters[c.Name] = c
		}
	}
	return true
}

// addDNS keeps the first claim on a DNS name: ExtensionServices first, then
// proxies in claim order.
func (a *assembler) addDNS(n DNSName, owner objects.Key) {
	if prev, taken := a.dns[n.Name]; taken {
		if prev.Cluster != n.Cluster && prev.Cluster.Name != n.Cluster.Name {
			st := a.merge(owner, nil)
			st.Warnings = append(st.Warnings, DNSNameTaken(n.Name))
		}
		return
	}
	a.dns[n.Name] = n
	a.clusters[n.Cluster.Name] = n.Cluster
}

func (a *assembler) extensions(exts Extensions) {
	names := make([]objects.Key, 0, len(exts))
	for nn := range exts {
		names = append(names, objects.NewKey(objects.KindExtensionService, nn))
	}
	sort.Slice(names, func(i, j int) bool { return names[i].Less(names[j]) })
	for _, k := range names {
		e := exts[k.NamespacedName()]
		a.merge(k, e.Status)
		if e.Cluster != nil {
			a.addDNS(DNSName{Name: ExtensionDNSName(e.Name), Cluster: e.Cluster}, k)
			for _, s := range e.Secrets {
				a.secrets[s.Name] = s
			}
		}
	}
}

// orphans gives every served non-root proxy that no root reached the
// Orphaned status.
func (a *assembler) orphans(snap *objects.Snapshot, opts Options) {
	for nn, p := range snap.HTTPProxies {
		if !Served(p, opts) {
			continue
		}
		key := objects.NewKey(objects.KindHTTPProxy, nn)
		if _, ok := a.statuses[key]; ok {
			continue
		}
		a.statuses[key] = OrphanedStatus(key, p.Generation)
	}
}

// OrphanedStatus is the status of a served proxy that is not a root and
// that no valid root includes.
func OrphanedStatus(key objects.Key, generation int64) *Status {
	st := &Status{Key: key, Generation: generation, State: switchyardv1.StatusOrphaned}
	st.finalize(key.Kind.String())
	return st
}

// delegations checks each TLSCertificateDelegation on its own.
func (a *assembler) delegations(snap *objects.Snapshot) {
	for nn, d := range snap.Delegations {
		st := DelegationStatus(snap, nn, d)
		a.statuses[st.Key] = st
	}
}

// DelegationStatus checks one TLSCertificateDelegation on its own: it
// depends on nothing but the delegation and the Secrets it names.
func DelegationStatus(snap *objects.Snapshot, nn types.NamespacedName, d *switchyardv1.TLSCertificateDelegation) *Status {
	st := &Status{Key: objects.NewKey(objects.KindTLSCertificateDelegation, nn), Generation: d.Generation}
	if len(d.Spec.Delegations) == 0 {
		st.addError(ErrDelegation, "NoDelegations", "spec.delegations: at least one delegation is required")
	}
	for i, del := range d.Spec.Delegations {
		checkDelegation(snap, nn.Namespace, i, del, st)
	}
	st.finalize(st.Key.Kind.String())
	return st
}

func checkDelegation(snap *objects.Snapshot, ns string, i int, del switchyardv1.CertificateDelegation, st *Status) {
	if del.SecretName == "" {
		st.addError(ErrDelegation, "InvalidSecretName", "spec.delegations[%d].secretName: must be set", i)
		return
	}
	if len(del.TargetNamespaces) == 0 {
		st.addError(ErrDelegation, "NoTargetNamespaces", "spec.delegations[%d].targetNamespaces: at least one namespace (or \"*\") is required", i)
	}
	for j, t := range del.TargetNamespaces {
		if t == "" {
			st.addError(ErrDelegation, "InvalidTargetNamespace", "spec.delegations[%d].targetNamespaces[%d]: must not be empty", i, j)
		}
	}
	if snap.Secrets[types.NamespacedName{Namespace: ns, Name: del.SecretName}] == nil {
		st.addWarning(ErrDelegation, "SecretNotFound", "spec.delegations[%d].secretName: Secret %s/%s not found", i, ns, del.SecretName)
	}
}

func (a *assembler) result() *Result {
	d := a.d
	sort.Slice(d.VirtualHosts, func(i, j int) bool { return d.VirtualHosts[i].FQDN < d.VirtualHosts[j].FQDN })
	sort.Slice(d.SecureVirtualHosts, func(i, j int) bool { return d.SecureVirtualHosts[i].FQDN < d.SecureVirtualHosts[j].FQDN })
	d.Clusters = sortedClusters(a.clusters)
	d.Secrets = sortedSecrets(a.secrets)
	for _, n := range a.dns {
		d.DNSNames = append(d.DNSNames, n)
	}
	sort.Slice(d.DNSNames, func(i, j int) bool { return d.DNSNames[i].Name < d.DNSNames[j].Name })
	res := &Result{DAG: d}
	for _, k := range sortedKeys(a.statuses) {
		st := a.statuses[k]
		st.finalize(k.Kind.String())
		res.Statuses = append(res.Statuses, st)
	}
	return res
}

// JoinStatus is the status Assemble reports for one object from the
// statuses that units found for it (in any order) plus the conditions only
// the assembly decides, which are kept as given, duplicates included.
func JoinStatus(key objects.Key, parts []*Status, errs, warnings []switchyardv1.SubCondition) *Status {
	st := &Status{Key: key}
	for _, p := range parts {
		mergeStatus(st, p)
	}
	st.Errors = append(st.Errors, errs...)
	st.Warnings = append(st.Warnings, warnings...)
	st.finalize(key.Kind.String())
	return st
}

func sortedKeys(s statusSet) []objects.Key {
	out := make([]objects.Key, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}
