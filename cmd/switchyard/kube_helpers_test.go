package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/examples/deploy"
	"github.com/switchyard-dev/switchyard/internal/k8ssource"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/testenv"
	"github.com/switchyard-dev/switchyard/internal/testutil/logbuf"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// kubeEnv is the package's API server, started by the first test that
// needs one.
var kubeEnv testenv.Lazy

func TestMain(m *testing.M) {
	// Before any goroutine of client-go exists: quiet, and race-free.
	routeKlog(slog.New(slog.DiscardHandler))
	code := m.Run()
	kubeEnv.Stop()
	os.Exit(code)
}

// deployNamespace is where examples/deploy installs Switchyard.
const deployNamespace = "switchyard"

var rbacOnce sync.Once

// controllerIdentity returns the Env and a client configuration
// authenticated as the service account of examples/deploy/01-rbac.yaml,
// which it applies (for real) the first time: the controllers under test
// have exactly the rights a deployed one has.
func controllerIdentity(t *testing.T) (*testenv.Env, *rest.Config) {
	t.Helper()
	env := kubeEnv.Get(t)
	var err error
	rbacOnce.Do(func() {
		m := deploy.Manifests()
		for _, f := range []string{"00-namespace.yaml", "01-rbac.yaml"} {
			if _, _, err = env.Apply(context.Background(), m[f], false); err != nil {
				return
			}
		}
	})
	if err != nil {
		t.Fatalf("applying the RBAC of examples/deploy: %v", err)
	}
	rc, err := env.User("system:serviceaccount:"+deployNamespace+":switchyard", "system:serviceaccounts", "system:serviceaccounts:"+deployNamespace)
	if err != nil {
		t.Fatal(err)
	}
	return env, rc
}

// appFixture makes a namespace holding a Service web with one endpoint,
// addr, and a root HTTPProxy app for host routing to it.
func appFixture(t *testing.T, prefix, addr string) (k *kubeObjects, host string, rc *rest.Config) {
	t.Helper()
	env, rc := controllerIdentity(t)
	k = newKubeObjects(t, env, env.Namespace(t))
	host = prefix + "." + k.ns + ".example.com"
	k.service("web", addr)
	k.proxy("app", host, "web", "")
	return k, host, rc
}

// replica is one in-process `switchyard serve` on the API server.
type replica struct {
	c      *controller
	reg    *prometheus.Registry
	logs   *logbuf.Buffer
	cancel context.CancelFunc
	done   chan error
}

// testLease returns leader election settings short enough for tests:
// a takeover after a crash within 2 s.
func testLease(ns, name string) kubeOptions {
	return kubeOptions{
		watchNamespaces: []string{ns},
		leaderElect:     true,
		leaseNamespace:  deployNamespace,
		leaseName:       name,
		leaseDuration:   2 * time.Second,
		renewDeadline:   1500 * time.Millisecond,
		retryPeriod:     200 * time.Millisecond,
	}
}

func startReplica(t *testing.T, rc *rest.Config, opts kubeOptions) *replica {
	t.Helper()
	r := &replica{reg: prometheus.NewRegistry(), logs: &logbuf.Buffer{}, done: make(chan error, 1)}
	cfg := server.Config{
		XDSAddress:   "127.0.0.1:0",
		AdminAddress: "127.0.0.1:0",
		Holdoff:      20 * time.Millisecond,
		MaxWait:      100 * time.Millisecond,
		Registry:     r.reg,
	}
	cfg.Pipeline.Translator = translator.DefaultOptions()
	cfg.Pipeline.Warmup, cfg.Pipeline.Linger = 20*time.Millisecond, 200*time.Millisecond
	log := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := newController(opts, cfg, rc, "default", log)
	if err != nil {
		t.Fatal(err)
	}
	r.c = c
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- c.run(ctx) }()
	t.Cleanup(func() {
		r.stop(t)
		if t.Failed() {
			t.Logf("replica log:\n%s", r.logs.String())
		}
	})
	testenv.WaitFor(t, 30*time.Second, "the replica to serve xDS", func() bool { return c.server.XDSAddr() != nil })
	return r
}

// stop stops the replica as SIGTERM does and waits for it to return.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("replica: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("replica did not stop")
	}
}

// metric returns the value of the first metric line that starts with
// prefix, "" when there is none.
func (r *replica) metric(t *testing.T, prefix string) string {
	t.Helper()
	resp, err := http.Get("http://" + r.c.server.AdminAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, prefix) {
			return line[strings.LastIndexByte(line, ' ')+1:]
		}
	}
	return ""
}

// kubeObjects creates objects through an administrator's client.
type kubeObjects struct {
	t        *testing.T
	env      *testenv.Env
	ns       string
	crd      *rest.RESTClient // switchyard.dev/v1
	crdAlpha *rest.RESTClient // switchyard.dev/v1alpha1
}

func newKubeObjects(t *testing.T, env *testenv.Env, ns string) *kubeObjects {
	t.Helper()
	c, err := k8ssource.RESTClient(env.Config, switchyardv1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := k8ssource.RESTClient(env.Config, switchyardv1alpha1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	return &kubeObjects{t: t, env: env, ns: ns, crd: c, crdAlpha: ca}
}

// service creates a Service web-like backend with one EndpointSlice of
// the given addresses on port 8080.
func (k *kubeObjects) service(name string, addrs ...string) {
	k.t.Helper()
	ctx := context.Background()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	if _, err := k.env.Client.CoreV1().Services(k.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		k.t.Fatal(err)
	}
	if _, err := k.env.Client.DiscoveryV1().EndpointSlices(k.ns).Create(ctx, slice(k.ns, name, addrs...), metav1.CreateOptions{}); err != nil {
		k.t.Fatal(err)
	}
}

func slice(ns, svc string, addrs ...string) *discoveryv1.EndpointSlice {
	es := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: svc + "-1", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
	}
	for _, a := range addrs {
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	}
	return es
}

// tlsSecret creates a kubernetes.io/tls Secret with a self-signed
// certificate for host.
func (k *kubeObjects) tlsSecret(name, host string) {
	k.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		k.t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		k.t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		k.t.Fatal(err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
		},
	}
	if _, err := k.env.Client.CoreV1().Secrets(k.ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		k.t.Fatal(err)
	}
}

// proxy creates a root HTTPProxy for host routing to svc, terminating TLS
// with secret when it is not empty.
func (k *kubeObjects) proxy(name, host, svc, secret string) *switchyardv1.HTTPProxy {
	k.t.Helper()
	p := &switchyardv1.HTTPProxy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns},
		Spec: switchyardv1.HTTPProxySpec{
			VirtualHost: &switchyardv1.VirtualHost{Fqdn: host},
			Routes:      []switchyardv1.Route{{Services: []switchyardv1.Service{{Name: svc, Port: 80}}}},
		},
	}
	if secret != "" {
		p.Spec.VirtualHost.TLS = &switchyardv1.TLS{SecretName: secret}
	}
	if err := k.crd.Post().Namespace(k.ns).Resource("httpproxies").Body(p).Do(context.Background()).Into(p); err != nil {
		k.t.Fatal(err)
	}
	return p
}

// create creates a Switchyard object of another kind than HTTPProxy.
func (k *kubeObjects) create(resource string, obj runtime.Object) {
	k.t.Helper()
	c := k.crd
	if _, ok := obj.(*switchyardv1alpha1.ExtensionService); ok {
		c = k.crdAlpha
	}
	if err := c.Post().Namespace(k.ns).Resource(resource).Body(obj).Do(context.Background()).Into(obj); err != nil {
		k.t.Fatal(err)
	}
}

// get reads a Switchyard object into obj.
func (k *kubeObjects) get(resource, name string, obj runtime.Object) {
	k.t.Helper()
	c := k.crd
	if _, ok := obj.(*switchyardv1alpha1.ExtensionService); ok {
		c = k.crdAlpha
	}
	if err := c.Get().Namespace(k.ns).Resource(resource).Name(name).Do(context.Background()).Into(obj); err != nil {
		k.t.Fatal(err)
	}
}

func (k *kubeObjects) getProxy(name string) *switchyardv1.HTTPProxy {
	k.t.Helper()
	p := &switchyardv1.HTTPProxy{}
	if err := k.crd.Get().Namespace(k.ns).Resource("httpproxies").Name(name).Do(context.Background()).Into(p); err != nil {
		k.t.Fatal(err)
	}
	return p
}

func (k *kubeObjects) updateProxy(p *switchyardv1.HTTPProxy) {
	k.t.Helper()
	if err := k.crd.Put().Namespace(k.ns).Resource("httpproxies").Name(p.Name).Body(p).Do(context.Background()).Into(p); err != nil {
		k.t.Fatal(err)
	}
}

// waitStatus waits until an HTTPProxy's status is state, and returns it.
func (k *kubeObjects) waitStatus(name, state string) *switchyardv1.HTTPProxy {
	k.t.Helper()
	var p *switchyardv1.HTTPProxy
	testenv.WaitFor(k.t, 30*time.Second, "HTTPProxy "+name+" to be "+state, func() bool {
		p = k.getProxy(name)
		return p.Status.CurrentStatus == state && p.Generation == validCondition(p).ObservedGeneration
	})
	return p
}

func validCondition(p *switchyardv1.HTTPProxy) switchyardv1.DetailedCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == switchyardv1.ConditionValid {
			return c
		}
	}
	return switchyardv1.DetailedCondition{}
}

// httpGet returns the body of a 200 answer, "" otherwise.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return ""
	}
	return string(b)
}

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// cutProxy forwards TCP connections to an address until cut, which
// closes them all at once: a replica behind it loses the API server the
// way a crashed or partitioned node does, without releasing anything.
type cutProxy struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
			go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
		}
	}()
	t.Cleanup(p.cut)
	return p
}

func (p *cutProxy) addr() string { return p.l.Addr().String() }

func (p *cutProxy) cut() {
	_ = p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
}
