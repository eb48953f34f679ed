// Package churn makes random changes to a snapshot, for tests that compare
// an incremental build with a full one over many steps (internal/incremental,
// internal/pipeline). Its changes aim at what crosses the units of a build:
// includes (cycles, roots included, missing targets), duplicate host names
// and claim order, roots that stop being roots, DNS names two objects
// want, shared Services, Secrets and delegations, ExtensionServices used
// for authorization, Nodes that drain endpoints.
//
// It expects a snapshot shaped like internal/scalegen's (team-<n>
// namespaces, app-<n>-r<r>-s<s> Services, auth/authz-<n>
// ExtensionServices, certs/wildcard).
package churn

import (
	"fmt"
	"math/rand"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// Mutator makes random changes to a snapshot the way sources would:
// objects are replaced by edited copies or deleted, never modified in
// place.
type Mutator struct {
	rng  *rand.Rand
	snap *objects.Snapshot
	// n numbers new objects.
	n int
	// tls is a valid certificate Secret to copy.
	tls *corev1.Secret
}

// New returns a Mutator of snap, which it changes.
func New(seed int64, snap *objects.Snapshot) *Mutator {
	m := &Mutator{rng: rand.New(rand.NewSource(seed)), snap: snap}
	for _, s := range snap.Secrets {
		m.tls = s
	}
	return m
}

func (m *Mutator) pick(keys []types.NamespacedName) types.NamespacedName {
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].String() < keys[j].String()
	})
	return keys[m.rng.Intn(len(keys))]
}

func keysOf[T any](in map[types.NamespacedName]T) []types.NamespacedName {
	out := make([]types.NamespacedName, 0, len(in))
	for k := range in {
		out = append(out, k)
	}
	return out
}

// Step makes one to three changes, applies them to the snapshot and
// returns them, with the Services whose endpoints they touch (a moved
// slice counts for both Services) and whether a Node changed.
func (m *Mutator) Step() ([]objects.Change, map[types.NamespacedName]bool, bool) {
	var changes []objects.Change
	endpoints := map[types.NamespacedName]bool{}
	all := false
	for range 1 + m.rng.Intn(3) {
		c := m.change()
		if c == nil {
			continue
		}
		if m.snap.EndpointScope(*c, endpoints) {
			all = true
		}
		if err := m.snap.Apply(*c); err != nil {
			panic(err)
		}
		changes = append(changes, *c)
	}
	return changes, endpoints, all
}

func upsert(o runtime.Object) *objects.Change {
	k, err := objects.KeyOf(o)
	if err != nil {
		panic(err)
	}
	return &objects.Change{Key: k, Object: o}
}

func del(kind objects.Kind, nn types.NamespacedName) *objects.Change {
	return &objects.Change{Key: objects.NewKey(kind, nn)}
}

func (m *Mutator) change() *objects.Change {
	switch r := m.rng.Intn(100); {
	case r < 40:
		return m.proxyChange()
	case r < 52:
		return m.serviceChange()
	case r < 66:
		return m.sliceChange()
	case r < 76:
		return m.secretChange()
	case r < 82:
		return m.delegationChange()
	case r < 94:
		return m.extensionChange()
	default:
		return m.nodeChange()
	}
}

func (m *Mutator) proxyChange() *objects.Change {
	keys := keysOf(m.snap.HTTPProxies)
	if len(keys) == 0 || m.rng.Intn(12) == 0 {
		return upsert(m.newProxy())
	}
	nn := m.pick(keys)
	if m.rng.Intn(10) == 0 {
		return del(objects.KindHTTPProxy, nn)
	}
	p := m.snap.HTTPProxies[nn].DeepCopy()
	p.Generation++
	switch m.rng.Intn(14) {
	case 0: // another root's host name: a duplicate, settled by claim order
		if other := m.snap.HTTPProxies[m.pick(keys)]; other.Spec.VirtualHost != nil {
			p.Spec.VirtualHost = other.Spec.VirtualHost.DeepCopy()
		}
	case 1: // becomes a root, or stops being one
		if p.Spec.VirtualHost != nil {
			p.Spec.VirtualHost = nil
		} else {
			p.Spec.VirtualHost = &switchyardv1.VirtualHost{Fqdn: fmt.Sprintf("h%d.example.com", m.rng.Intn(30))}
		}
	case 2: // includes anything: a team proxy, a root, itself, a missing one
		target := m.pick(keys)
		for _, q := range keys {
			// Often the proxy's includer: a cycle.
			for _, inc := range m.snap.HTTPProxies[q].Spec.Includes {
				if inc.Name == nn.Name && (inc.Namespace == nn.Namespace || inc.Namespace == "" && q.Namespace == nn.Namespace) && m.rng.Intn(2) == 0 {
					target = q
				}
			}
		}
		switch m.rng.Intn(6) {
		case 0:
			target.Name = "missing"
		case 1:
			target = nn
		}
		p.Spec.Includes = append(p.Spec.Includes, switchyardv1.Include{
			Name: target.Name, Namespace: target.Namespace,
			Conditions: []switchyardv1.MatchCondition{{Prefix: fmt.Sprintf("/i%d", m.rng.Intn(4))}},
		})
	case 3:
		p.Spec.Includes = nil
	case 4: // claim order
		p.CreationTimestamp = metav1.NewTime(time.Unix(int64(m.rng.Intn(5))*60, 0))
	case 5:
		p.Spec.IngressClassName = []string{"", "other"}[m.rng.Intn(2)]
	case 6: // TLS with the team's, the delegated, or a missing certificate; with or without the fallback certificate
		if vh := p.Spec.VirtualHost; vh != nil {
			k := m.rng.Intn(6)
			vh.TLS = []*switchyardv1.TLS{
				nil, {SecretName: "team-tls"}, {SecretName: "certs/wildcard"}, {SecretName: "nope"},
				{SecretName: "team-tls", EnableFallbackCertificate: true}, {SecretName: "certs/wildcard", EnableFallbackCertificate: true},
			}[k]
			if k == 4 {
				// The fallback certificate cannot be used with
				// authorization or JWT: this one can be served.
				vh.Authorization, vh.JWTProviders = nil, nil
			}
		}
	case 7: // authorization by a random (maybe missing) ExtensionService
		if vh := p.Spec.VirtualHost; vh != nil {
			vh.Authorization = nil
			if m.rng.Intn(3) > 0 {
				vh.Authorization = &switchyardv1.AuthorizationServer{ExtensionServiceRef: &switchyardv1.ExtensionServiceReference{
					Namespace: "auth", Name: fmt.Sprintf("authz-%d", m.rng.Intn(3)),
				}}
			}
		}
	case 8: // named routes (DNS names), duplicates included
		for i := range p.Spec.Routes {
			p.Spec.Routes[i].Name = []string{"", "api", "web"}[m.rng.Intn(3)]
		}
	case 9: // traffic policies of the host or a route
		m.policyChange(p)
	default: // a route's services and weights
		m.editRoutes(p)
	}
	return upsert(p)
}

func (m *Mutator) editRoutes(p *switchyardv1.HTTPProxy) {
	services := keysOf(m.snap.Services)
	var local []types.NamespacedName
	for _, s := range services {
		if s.Namespace == p.Namespace {
			local = append(local, s)
		}
	}
	if len(local) == 0 {
		local = []types.NamespacedName{{Namespace: p.Namespace, Name: "none"}}
	}
	switch m.rng.Intn(4) {
	case 0:
		p.Spec.Routes = append(p.Spec.Routes, switchyardv1.Route{
			Conditions: []switchyardv1.MatchCondition{{Prefix: fmt.Sprintf("/p%d", m.rng.Intn(5))}},
			Services:   []switchyardv1.Service{{Name: m.pick(local).Name, Port: 80}},
		})
	case 1:
		if len(p.Spec.Routes) > 0 {
			p.Spec.Routes = p.Spec.Routes[:len(p.Spec.Routes)-1]
		}
	default:
		if len(p.Spec.Routes) == 0 {
			return
		}
		r := &p.Spec.Routes[m.rng.Intn(len(p.Spec.Routes))]
		r.Services = nil
		for range 1 + m.rng.Intn(2) {
			w := int64(m.rng.Intn(3) * 10)
			r.Services = append(r.Services, switchyardv1.Service{Name: m.pick(local).Name, Port: []int32{80, 81}[m.rng.Intn(4)/3], Weight: &w})
		}
	}
}

func (m *Mutator) newProxy() *switchyardv1.HTTPProxy {
	m.n++
	ns := fmt.Sprintf("team-%d", m.rng.Intn(4))
	name := fmt.Sprintf("new-%d", m.n)
	if m.rng.Intn(6) == 0 {
		// Named like an ExtensionService: its DNS name is taken.
		ns, name = "auth", fmt.Sprintf("authz-%d", m.rng.Intn(3))
	}
	p := &switchyardv1.HTTPProxy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1}}
	if m.rng.Intn(2) == 0 {
		p.Spec.VirtualHost = &switchyardv1.VirtualHost{Fqdn: fmt.Sprintf("h%d.example.com", m.rng.Intn(30))}
	}
	p.Spec.Routes = []switchyardv1.Route{{Services: []switchyardv1.Service{{Name: fmt.Sprintf("app-%d-r0-s0", m.rng.Intn(40)), Port: 80}}}}
	if ns == "auth" {
		p.Spec.Routes[0].Services[0] = switchyardv1.Service{Name: "authz-0", Port: 9001}
	}
	return p
}

func (m *Mutator) serviceChange() *objects.Change {
	nn := types.NamespacedName{Namespace: fmt.Sprintf("team-%d", m.rng.Intn(4)), Name: "none"}
	if keys := keysOf(m.snap.Services); len(keys) > 0 {
		nn = m.pick(keys)
	}
	if m.snap.Services[nn] == nil {
		return upsert(&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: fmt.Sprintf("app-%d-r0-s0", m.rng.Intn(40))},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		})
	}
	switch m.rng.Intn(4) {
	case 0:
		return del(objects.KindService, nn)
	case 1: // back, or a new one a route may name
		return upsert(&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: fmt.Sprintf("app-%d-r0-s0", m.rng.Intn(40))},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		})
	}
	s := m.snap.Services[nn].Kubernetes()
	switch {
	case m.rng.Intn(2) == 1:
		s.Annotations = map[string]string{objects.DrainAnnotation: "true"}
	case hasPort(s, 81):
		// Given its second port again: it becomes an ExternalName
		// Service, whose routes get a DNS-resolved cluster, or an error
		// when ExternalName Services are off. No draw of its own, so that
		// the sequences stay those the other changes were tuned with.
		s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, s.Name+".vendor.example.net"
	default:
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "alt", Port: 81})
	}
	return upsert(s)
}

func hasPort(s *corev1.Service, port int32) bool {
	for _, p := range s.Spec.Ports {
		if p.Port == port {
			return true
		}
	}
	return false
}

func (m *Mutator) sliceChange() *objects.Change {
	keys := keysOf(m.snap.EndpointSlices)
	if len(keys) == 0 {
		return nil
	}
	nn := m.pick(keys)
	if m.rng.Intn(6) == 0 {
		return del(objects.KindEndpointSlice, nn)
	}
	es := m.snap.EndpointSlices[nn].Kubernetes()
	switch m.rng.Intn(4) {
	case 0: // moves to another Service
		if len(m.snap.Services) == 0 {
			break
		}
		es.Labels = map[string]string{objects.ServiceNameLabel: m.pick(keysOf(m.snap.Services)).Name}
	case 1:
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.200.0.%d", m.rng.Intn(250))}, NodeName: ptr("node-1")})
	default:
		if len(es.Endpoints) > 0 {
			ep := &es.Endpoints[m.rng.Intn(len(es.Endpoints))]
			ep.Conditions.Ready = ptr(m.rng.Intn(2) == 0)
			ep.NodeName = ptr(fmt.Sprintf("node-%d", m.rng.Intn(2)))
		}
	}
	return upsert(es)
}

func (m *Mutator) secretChange() *objects.Change {
	if keys := keysOf(m.snap.Secrets); len(keys) > 0 {
		nn := m.pick(keys)
		switch m.rng.Intn(3) {
		case 0:
			return del(objects.KindSecret, nn)
		case 1:
			s := m.snap.Secrets[nn].DeepCopy()
			s.Data[corev1.TLSCertKey] = []byte("not a certificate")
			return upsert(s)
		}
	}
	// A valid certificate, under a team's name or the delegated one.
	c := m.tls.DeepCopy()
	c.Namespace, c.Name = fmt.Sprintf("team-%d", m.rng.Intn(4)), []string{"team-tls", "other-tls"}[m.rng.Intn(2)]
	if m.rng.Intn(4) == 0 {
		c.Namespace, c.Name = "certs", "wildcard"
	}
	return upsert(c)
}

func (m *Mutator) delegationChange() *objects.Change {
	nn := types.NamespacedName{Namespace: "certs", Name: "wildcard"}
	if m.snap.Delegations[nn] != nil && m.rng.Intn(2) == 0 {
		return del(objects.KindTLSCertificateDelegation, nn)
	}
	targets := [][]string{{"*"}, {"team-0", "team-1"}, {"team-2"}, {}}[m.rng.Intn(4)]
	return upsert(&switchyardv1.TLSCertificateDelegation{
		ObjectMeta: metav1.ObjectMeta{Namespace: "certs", Name: "wildcard"},
		Spec: switchyardv1.TLSCertificateDelegationSpec{Delegations: []switchyardv1.CertificateDelegation{{
			SecretName: []string{"wildcard", "missing"}[m.rng.Intn(4)/3], TargetNamespaces: targets,
		}}},
	})
}

func (m *Mutator) extensionChange() *objects.Change {
	nn := types.NamespacedName{Namespace: "auth", Name: fmt.Sprintf("authz-%d", m.rng.Intn(3))}
	if m.snap.ExtensionServices[nn] != nil && m.rng.Intn(3) == 0 {
		return del(objects.KindExtensionService, nn)
	}
	ext := &switchyardv1alpha1.ExtensionService{ObjectMeta: metav1.ObjectMeta{Namespace: nn.Namespace, Name: nn.Name, Generation: int64(m.rng.Intn(5))}}
	ext.Spec.Services = []switchyardv1alpha1.ExtensionServiceTarget{{Name: "authz-0", Port: 9001}}
	switch m.rng.Intn(4) {
	case 0:
		ext.Spec.Protocol = ptr("bogus")
	case 1:
		ext.Spec.AllowedNamespaces = []string{"team-0"}
	default:
		ext.Spec.AllowedNamespaces = []string{"*"}
	}
	return upsert(ext)
}

func (m *Mutator) nodeChange() *objects.Change {
	name := fmt.Sprintf("node-%d", m.rng.Intn(2))
	if m.rng.Intn(3) == 0 {
		return &objects.Change{Key: objects.Key{Kind: objects.KindNode, Name: name}}
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if m.rng.Intn(2) == 0 {
		n.Annotations = map[string]string{objects.DrainAnnotation: "true"}
	}
	return upsert(n)
}

func ptr[T any](v T) *T { return &v }
