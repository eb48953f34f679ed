package dag_test

import (
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/dag"
)

// The object-graph generator: it reads choices from a byte string, so the
// fuzzer's mutations become structural ones (another include target, one
// more weighted service, a delegation to the wrong namespace) instead of
// broken YAML. Every choice is drawn from a small pool of names so that
// references mostly resolve, and each pool holds some values the builder
// must reject.

// choices reads a byte string as a sequence of choices; past its end every
// choice is 0, so any input, even empty, is a complete recipe.
type choices struct {
	data []byte
	pos  int
}

func (c *choices) byte() byte {
	if c.pos >= len(c.data) {
		return 0
	}
	b := c.data[c.pos]
	c.pos++
	return b
}

// intn returns a number in [0, n).
func (c *choices) intn(n int) int { return int(c.byte()) % n }

// oneIn is true with probability about 1/n; false past the input's end,
// so that a short input makes a plain graph.
func (c *choices) oneIn(n int) bool { return c.intn(n) == n-1 }

func pick[T any](c *choices, xs []T) T { return xs[c.intn(len(xs))] }

// pool is a set of values to draw from: mostly good ones, sometimes one
// the builder must reject.
type pool[T any] struct{ good, bad []T }

// draw picks a good value, or a bad one about one time in eight.
func draw[T any](c *choices, p pool[T]) T {
	if len(p.bad) > 0 && c.oneIn(8) {
		return pick(c, p.bad)
	}
	return pick(c, p.good)
}

var (
	genNamespaces = []string{"a", "b"}
	genServices   = pool[string]{[]string{"s0", "s1", "s2"}, []string{"ext", ""}}
	genPorts      = pool[int32]{[]int32{80, 443, 8080}, []int32{0, 70000, -1}}
	genProxies    = []string{"p0", "p1", "p2", "p3", "p4", "p5"}
	genFQDNs      = pool[string]{[]string{"one.example.com", "two.example.com", "x.example.org"}, []string{"*.example.com", "", "UP.example.com", "10.0.0.1", "a..b", "host:80", "-x.com", "\xff.example.com"}}
	genSecrets    = pool[string]{[]string{"tls", "ca", "b/tls", "a/ca", "a/tls"}, []string{"bad", "missing", "/x", "a/b/c"}}
	genPrefixes   = pool[string]{[]string{"/", "/api", "/api/", "/v1", "/a/b"}, []string{"/../up", "api", "/a//b", "/%2e%2e/x", "/q?x", "/a\\b", "/%zz", "/\xff"}}
	genRegexes    = pool[string]{[]string{"/r/[0-9]+", "/(a|b)", ".*", "/[[:alpha:]]+"}, []string{"(", "/x{1000}", "/(?=x)", "/\\C", "(a*)*{1001}"}}
	genHeaders    = pool[string]{[]string{"x-user", "X-Mixed", "x-b"}, []string{"bad header", "", ":authority", "x-\r\n", "x\x00", "x-\xff"}}
	genValues     = pool[string]{[]string{"v", "a b", "tab\tok", "x"}, []string{"line\r\nbreak", "\x7f", "nul\x00", "\xff\xfe"}}
	genDurations  = pool[string]{[]string{"", "1s", "infinity", "10ms", "2m"}, []string{"0s", "-1s", "9000h", "soon", "100us", "1e3s"}}
	genWeights    = pool[int64]{[]int64{1, 10, 90, 0}, []int64{-1, math.MaxUint32, math.MaxInt64}}
	genPriorities = pool[int32]{[]int32{0, 1}, []int32{2, -1}}
)

// maybe returns nil half the time, else a value drawn from p.
func maybe[T any](c *choices, p pool[T]) *T {
	if c.oneIn(2) {
		return nil
	}
	v := draw(c, p)
	return &v
}

func (c *choices) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace:         pick(c, genNamespaces),
		Name:              name,
		Generation:        int64(1 + c.intn(3)),
		CreationTimestamp: metav1.NewTime(time.Unix(int64(1000+c.intn(4)), 0)),
	}
}

// genObjects builds a snapshot's worth of objects from the choices.
func genObjects(c *choices) []runtime.Object {
	var out []runtime.Object
	for _, ns := range genNamespaces {
		for _, name := range genServices.good {
			if !c.oneIn(5) {
				out = append(out, c.service(ns, name))
			}
		}
	}
	for range c.intn(4) {
		out = append(out, c.slice())
	}
	for _, ns := range genNamespaces {
		for _, name := range []string{"tls", "ca", "bad"} {
			if !c.oneIn(4) {
				out = append(out, c.secret(ns, name))
			}
		}
	}
	for range c.intn(3) {
		out = append(out, c.delegation())
	}
	for range c.intn(3) {
		out = append(out, c.extension())
	}
	for range 1 + c.intn(len(genProxies)) {
		out = append(out, c.proxy())
	}
	return out
}

// service makes a Service that usually has every port routes use.
func (c *choices) service(ns, name string) *corev1.Service {
	s := &corev1.Service{ObjectMeta: c.meta(name)}
	s.Namespace = ns
	if c.oneIn(8) {
		s.Spec.Type = corev1.ServiceTypeExternalName
		s.Spec.ExternalName = "example.org"
	}
	for _, port := range genPorts.good {
		if c.oneIn(6) {
			continue
		}
		p := corev1.ServicePort{Port: port, Protocol: draw(c, pool[corev1.Protocol]{[]corev1.Protocol{corev1.ProtocolTCP, ""}, []corev1.Protocol{corev1.ProtocolUDP}})}
		if c.oneIn(4) {
			p.AppProtocol = ptrTo(pick(c, []string{"h2", "h2c", "tls", "kubernetes.io/h2c", "junk"}))
		}
		s.Spec.Ports = append(s.Spec.Ports, p)
	}
	return s
}

func (c *choices) slice() *discoveryv1.EndpointSlice {
	svc := draw(c, genServices)
	es := &discoveryv1.EndpointSlice{
		ObjectMeta:  c.meta(fmt.Sprintf("%s-%d", svc, c.intn(3))),
		AddressType: pick(c, []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN}),
		Ports:       []discoveryv1.EndpointPort{{Port: ptrTo(pick(c, []int32{8080, 0, 65535})), Protocol: ptrTo(corev1.ProtocolTCP)}},
	}
	es.Labels = map[string]string{discoveryv1.LabelServiceName: svc}
	for range c.intn(3) {
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{pick(c, []string{"10.0.0.1", "10.0.0.2", "::1", "not-an-ip", "host.example"})},
			Conditions: discoveryv1.EndpointConditions{Ready: ptrTo(c.oneIn(4)), Serving: ptrTo(!c.oneIn(4))},
			Zone:       ptrTo(pick(c, []string{"z1", "z2", ""})),
		})
	}
	return es
}

// secret makes a Secret: usually what its name says ("tls" a certificate
// and key, "ca" a CA bundle), sometimes broken, truncated or of the other
// kind; "bad" is always broken.
func (c *choices) secret(ns, name string) *corev1.Secret {
	cert, key := dag.SharedCertificate()
	s := &corev1.Secret{ObjectMeta: c.meta(name)}
	s.Namespace = ns
	kind := map[string]int{"tls": 0, "ca": 1, "bad": 2}[name]
	if c.oneIn(8) {
		kind = c.intn(4)
	}
	switch kind {
	case 0:
		s.Type, s.Data = corev1.SecretTypeTLS, map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key}
	case 1:
		s.Data = map[string][]byte{dag.CACertificateKey: cert}
	case 2:
		s.Data = map[string][]byte{corev1.TLSCertKey: cert[:len(cert)/2], corev1.TLSPrivateKeyKey: key, dag.CACertificateKey: []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")}
	default:
		s.Data = map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key, dag.CACertificateKey: cert}
	}
	return s
}

func (c *choices) delegation() *switchyardv1.TLSCertificateDelegation {
	d := &switchyardv1.TLSCertificateDelegation{ObjectMeta: c.meta(fmt.Sprintf("d%d", c.intn(2)))}
	for range c.intn(3) {
		d.Spec.Delegations = append(d.Spec.Delegations, switchyardv1.CertificateDelegation{
			SecretName:       pick(c, []string{"tls", "ca", "", "bad"}),
			TargetNamespaces: pick(c, [][]string{{"a"}, {"b"}, {"*"}, nil, {""}}),
		})
	}
	return d
}

func (c *choices) extension() *switchyardv1alpha1.ExtensionService {
	e := &switchyardv1alpha1.ExtensionService{ObjectMeta: c.meta(pick(c, []string{"auth", "auth2"}))}
	for range c.intn(3) {
		e.Spec.Services = append(e.Spec.Services, switchyardv1alpha1.ExtensionServiceTarget{
			Name: draw(c, genServices), Port: draw(c, genPorts), Weight: maybe(c, genWeights), Priority: maybe(c, genPriorities),
		})
	}
	if c.oneIn(3) {
		e.Spec.Protocol = ptrTo(pick(c, []string{"h2", "h2c", "tls", "http/1.1"}))
	}
	if c.oneIn(4) {
		e.Spec.UpstreamValidation = &switchyardv1.UpstreamValidation{CACertificate: draw(c, genSecrets), SubjectName: "auth.example.com"}
	}
	if c.oneIn(3) {
		e.Spec.TimeoutPolicy = &switchyardv1.TimeoutPolicy{Response: draw(c, genDurations), Idle: draw(c, genDurations)}
	}
	if c.oneIn(3) {
		e.Spec.AllowedNamespaces = pick(c, [][]string{{"a"}, {"b"}, {"*"}, {""}})
	}
	if c.oneIn(4) {
		e.Spec.CircuitBreakerPolicy = &switchyardv1alpha1.CircuitBreakers{MaxConnections: maybe(c, pool[int64]{[]int64{1, 100}, []int64{-5, math.MaxInt64}}), MaxRetries: maybe(c, pool[int64]{good: []int64{0, 3}})}
	}
	if c.oneIn(4) {
		e.Spec.LoadBalancerPolicy = &switchyardv1.LoadBalancerPolicy{Strategy: pick(c, []switchyardv1.LoadBalancerStrategy{switchyardv1.Random, switchyardv1.Cookie, "Nope"})}
	}
	return e
}

func ptrTo[T any](v T) *T { return &v }
