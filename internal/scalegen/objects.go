package scalegen

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

func meta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name, Generation: 1}
}

func ptr[T any](v T) *T { return &v }

// proxy builds one HTTPProxy: a root owns its host name (with TLS and
// authorization when planned so) and includes its team proxies under
// /<name>; every proxy has its routes, "/" first, then /api/v<n>.
func (g *generator) proxy(p *proxyPlan) *switchyardv1.HTTPProxy {
	hp := &switchyardv1.HTTPProxy{
		TypeMeta:   metav1.TypeMeta{APIVersion: switchyardv1.SchemeGroupVersion.String(), Kind: "HTTPProxy"},
		ObjectMeta: meta(p.namespace, p.name),
	}
	if p.root {
		hp.Spec.VirtualHost = g.virtualHost(p)
	}
	for r := range g.cfg.RoutesPerProxy {
		hp.Spec.Routes = append(hp.Spec.Routes, g.route(p, r))
	}
	for _, c := range p.children {
		child := &g.proxies[c]
		inc := switchyardv1.Include{
			Name:       child.name,
			Conditions: []switchyardv1.MatchCondition{{Prefix: "/" + child.name}},
		}
		if child.namespace != p.namespace {
			inc.Namespace = child.namespace
		}
		hp.Spec.Includes = append(hp.Spec.Includes, inc)
	}
	return hp
}

func (g *generator) virtualHost(p *proxyPlan) *switchyardv1.VirtualHost {
	vh := &switchyardv1.VirtualHost{Fqdn: fqdn(p.namespace, p.name)}
	if !p.tls {
		return vh
	}
	vh.TLS = &switchyardv1.TLS{SecretName: teamSecret}
	if p.delegated {
		vh.TLS.SecretName = certsNamespace + "/" + wildcardSecret
	}
	if p.authz >= 0 && p.authz%2 == 1 {
		// Some authorized hosts verify tokens too, before ext_authz.
		vh.JWTProviders = []switchyardv1.JWTProvider{{Name: "idp", Default: true, RemoteJWKS: switchyardv1.RemoteJWKS{URI: "https://idp.example.com/.well-known/jwks.json"}}}
	}
	if p.authz >= 0 {
		vh.Authorization = &switchyardv1.AuthorizationServer{
			ExtensionServiceRef: &switchyardv1.ExtensionServiceReference{Namespace: authNamespace, Name: fmt.Sprintf("authz-%d", p.authz)},
			ResponseTimeout:     "500ms",
			AuthPolicy:          &switchyardv1.AuthorizationPolicy{Context: map[string]string{"team": p.namespace}},
		}
	}
	return vh
}

// route builds route r of a proxy. A third of the routes set a response
// timeout and a third retry, as a real mix would.
func (g *generator) route(p *proxyPlan, r int) switchyardv1.Route {
	prefix := "/"
	if r > 0 {
		prefix = fmt.Sprintf("/api/v%d", r)
	}
	route := switchyardv1.Route{Conditions: []switchyardv1.MatchCondition{{Prefix: prefix}}}
	switch r % 3 {
	case 1:
		route.TimeoutPolicy = &switchyardv1.TimeoutPolicy{Response: "30s"}
	case 2:
		route.RetryPolicy = &switchyardv1.RetryPolicy{Count: ptr[int32](2), PerTryTimeout: "5s"}
	}
	if r%4 == 3 {
		// An admin route open to the cluster network only.
		route.IPAllowFilterPolicy = []switchyardv1.IPFilterPolicy{{Source: switchyardv1.IPFilterSourcePeer, CIDR: "10.0.0.0/8"}}
	}
	if r%5 == 4 {
		route.RateLimitPolicy = &switchyardv1.RateLimitPolicy{Local: &switchyardv1.LocalRateLimitPolicy{Requests: 100, Unit: "second", Burst: 50}}
	}
	for s := range g.cfg.ServicesPerRoute {
		svc := switchyardv1.Service{Name: serviceName(p, r, s), Port: 80}
		if g.cfg.ServicesPerRoute > 1 {
			svc.Weight = ptr(int64(10 * (s + 1)))
		}
		route.Services = append(route.Services, svc)
	}
	return route
}

// backend emits a Service with one named TCP port and its EndpointSlice.
func (g *generator) backend(namespace, name, portName string, port, targetPort int32) {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(namespace, name),
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{
				Name: portName, Port: port, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(targetPort),
			}},
		},
	}
	g.add(svc, g.endpointSlice(namespace, name, portName, targetPort))
}

// endpointSlice spreads the endpoints over the zones round robin; every
// tenth endpoint is terminating (not ready, still serving), as during a
// rolling update.
func (g *generator) endpointSlice(namespace, service, portName string, port int32) *discoveryv1.EndpointSlice {
	es := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
		ObjectMeta:  meta(namespace, service+"-"+sliceSuffix(g.nextIP)),
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr(portName), Port: ptr(port), Protocol: ptr(corev1.ProtocolTCP)}},
		Endpoints:   make([]discoveryv1.Endpoint, 0, g.cfg.EndpointsPerService),
	}
	es.Labels = map[string]string{objects.ServiceNameLabel: service}
	for e := range g.cfg.EndpointsPerService {
		ready := e%10 != 9
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{
			Addresses: []string{g.address()},
			Conditions: discoveryv1.EndpointConditions{
				Ready: ptr(ready), Serving: ptr(true), Terminating: ptr(!ready),
			},
			Zone: ptr(zoneName(e % g.cfg.Zones)),
		})
	}
	return es
}

// address returns the next unused address of 10.0.0.0/8.
func (g *generator) address() string {
	g.nextIP++
	n := g.nextIP
	return fmt.Sprintf("10.%d.%d.%d", n>>16&0xff, n>>8&0xff, n&0xff)
}

// sliceSuffix is the random-looking suffix Kubernetes gives slice names,
// derived from a counter so that it is stable.
func sliceSuffix(n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	n = n*7919 + 104729
	for i := range b {
		b[i] = alphabet[n%len(alphabet)]
		n /= len(alphabet)
	}
	return string(b)
}

func zoneName(z int) string {
	if z < 26 {
		return "zone-" + string(rune('a'+z))
	}
	return fmt.Sprintf("zone-%d", z)
}

func delegation(namespace, secret string) *switchyardv1.TLSCertificateDelegation {
	return &switchyardv1.TLSCertificateDelegation{
		TypeMeta:   metav1.TypeMeta{APIVersion: switchyardv1.SchemeGroupVersion.String(), Kind: "TLSCertificateDelegation"},
		ObjectMeta: meta(namespace, secret),
		Spec: switchyardv1.TLSCertificateDelegationSpec{
			Delegations: []switchyardv1.CertificateDelegation{{SecretName: secret, TargetNamespaces: []string{"*"}}},
		},
	}
}

func extensionService(name string) *switchyardv1alpha1.ExtensionService {
	return &switchyardv1alpha1.ExtensionService{
		TypeMeta:   metav1.TypeMeta{APIVersion: switchyardv1alpha1.SchemeGroupVersion.String(), Kind: "ExtensionService"},
		ObjectMeta: meta(authNamespace, name),
		Spec: switchyardv1alpha1.ExtensionServiceSpec{
			Protocol:          ptr("h2c"),
			Services:          []switchyardv1alpha1.ExtensionServiceTarget{{Name: name, Port: 9001}},
			AllowedNamespaces: []string{"*"},
		},
	}
}
