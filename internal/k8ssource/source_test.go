package k8ssource_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/k8ssource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// run starts a source and collects what it emits.
type run struct {
	src     *k8ssource.Source
	initial map[objects.Key]runtime.Object
	mu      sync.Mutex
	batches [][]objects.Change
}

func startSource(t *testing.T, namespaces ...string) *run {
	t.Helper()
	return startSourceWith(t, k8ssource.Config{Namespaces: namespaces})
}

// startSourceWith is startSource with more of the Config (REST and Log
// are set here).
func startSourceWith(t *testing.T, cfg k8ssource.Config) *run {
	t.Helper()
	cfg.REST, cfg.Log = env.Config, slog.New(slog.DiscardHandler)
	src, err := k8ssource.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	initial, err := src.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := &run{src: src, initial: map[objects.Key]runtime.Object{}}
	for _, c := range initial {
		r.initial[c.Key] = c.Object
	}
	go func() {
		_ = src.Run(ctx, func(b []objects.Change) {
			r.mu.Lock()
			r.batches = append(r.batches, b)
			r.mu.Unlock()
		})
	}()
	return r
}

// waitChange waits for a change to key that satisfies ok and returns it.
func (r *run) waitChange(t *testing.T, key objects.Key, what string, ok func(objects.Change) bool) objects.Change {
	t.Helper()
	var found *objects.Change
	testenv.WaitFor(t, 20*time.Second, what, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, b := range r.batches {
			for _, c := range b {
				if c.Key == key && ok(c) {
					found = &c
					return true
				}
			}
		}
		return false
	})
	return *found
}

// changesTo returns every change emitted for key so far.
func (r *run) changesTo(key objects.Key) []objects.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []objects.Change
	for _, b := range r.batches {
		for _, c := range b {
			if c.Key == key {
				out = append(out, c)
			}
		}
	}
	return out
}

func proxy(ns, name, tlsSecret string) *switchyardv1.HTTPProxy {
	p := &switchyardv1.HTTPProxy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: switchyardv1.HTTPProxySpec{
			VirtualHost: &switchyardv1.VirtualHost{Fqdn: name + ".example.com"},
			Routes:      []switchyardv1.Route{{Services: []switchyardv1.Service{{Name: "web", Port: 80}}}},
		},
	}
	if tlsSecret != "" {
		p.Spec.VirtualHost.TLS = &switchyardv1.TLS{SecretName: tlsSecret}
	}
	return p
}

func secret(ns, name string, typ corev1.SecretType) *corev1.Secret {
	data := map[string][]byte{"tls.crt": []byte("cert"), "tls.key": []byte("key")}
	if typ == "helm.sh/release.v1" {
		data = map[string][]byte{"release": []byte("r")}
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Type: typ, Data: data}
}

func mustCreate(t *testing.T, obj runtime.Object) {
	t.Helper()
	ctx := context.Background()
	var err error
	switch o := obj.(type) {
	case *switchyardv1.HTTPProxy:
		err = crdClient(t).Post().Namespace(o.Namespace).Resource("httpproxies").Body(o).Do(ctx).Into(o)
	case *corev1.Secret:
		_, err = env.Client.CoreV1().Secrets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Service:
		_, err = env.Client.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *discoveryv1.EndpointSlice:
		_, err = env.Client.DiscoveryV1().EndpointSlices(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Node:
		_, err = env.Client.CoreV1().Nodes().Create(ctx, o, metav1.CreateOptions{})
		t.Cleanup(func() { _ = env.Client.CoreV1().Nodes().Delete(ctx, o.Name, metav1.DeleteOptions{}) })
	default:
		t.Fatalf("mustCreate: %T", obj)
	}
	if err != nil {
		t.Fatalf("creating %T: %v", obj, err)
	}
}

func crdClient(t *testing.T) *rest.RESTClient {
	t.Helper()
	c, err := k8ssource.RESTClient(env.Config, switchyardv1.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestInitialSet checks what Start returns: every watched object,
// trimmed, and only the Secrets some object references.
func TestInitialSet(t *testing.T) {
	ns := env.Namespace(t)
	other := env.Namespace(t)
	p := proxy(ns, "app", "cert")
	p.Annotations = map[string]string{corev1.LastAppliedConfigAnnotation: strings.Repeat("x", 1000), "keep": "me"}
	mustCreate(t, p)
	mustCreate(t, secret(ns, "cert", corev1.SecretTypeTLS))
	mustCreate(t, secret(ns, "unreferenced", corev1.SecretTypeTLS))
	mustCreate(t, proxy(other, "elsewhere", ""))
	mustCreate(t, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	})
	mustCreate(t, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-1", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
	})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node", Annotations: map[string]string{objects.DrainAnnotation: "true"}}}
	mustCreate(t, node)
	// An ExternalName Service is kept whole: its routes resolve the name.
	mustCreate(t, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "hosted", Namespace: ns},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "api.vendor.example.net", Ports: []corev1.ServicePort{{Port: 443}}},
	})

	r := startSource(t, ns)
	want := []objects.Key{
		{Kind: objects.KindHTTPProxy, Namespace: ns, Name: "app"},
		{Kind: objects.KindService, Namespace: ns, Name: "web"},
		{Kind: objects.KindEndpointSlice, Namespace: ns, Name: "web-1"},
		{Kind: objects.KindSecret, Namespace: ns, Name: "cert"},
		{Kind: objects.KindNode, Name: ns + "-node"},
	}
	for _, k := range want {
		if r.initial[k] == nil {
			t.Errorf("missing %s", k)
		}
	}
	for _, k := range []objects.Key{
		{Kind: objects.KindSecret, Namespace: ns, Name: "unreferenced"},
		{Kind: objects.KindHTTPProxy, Namespace: other, Name: "elsewhere"},
	} {
		if r.initial[k] != nil {
			t.Errorf("%s must not be passed on", k)
		}
	}
	got := r.initial[want[0]].(*switchyardv1.HTTPProxy)
	if len(got.ManagedFields) != 0 || got.Annotations[corev1.LastAppliedConfigAnnotation] != "" || got.Annotations["keep"] != "me" {
		t.Errorf("proxy not trimmed: managedFields %d, annotations %v", len(got.ManagedFields), got.Annotations)
	}
	if n := r.initial[want[4]].(*corev1.Node); !objects.Drained(n.Annotations) {
		t.Errorf("node annotations lost: %v", n.Annotations)
	}
	hosted, _ := r.initial[objects.Key{Kind: objects.KindService, Namespace: ns, Name: "hosted"}].(*objects.Service)
	if hosted == nil || hosted.Spec.Type != corev1.ServiceTypeExternalName || hosted.Spec.ExternalName != "api.vendor.example.net" || len(hosted.Spec.Ports) != 1 {
		t.Errorf("ExternalName Service not passed on whole: %v", hosted)
	}
}

// TestSecretReferencedLater: a Secret is passed on when an object starts
// referencing it, and withdrawn when the last reference goes.
func TestSecretReferencedLater(t *testing.T) {
	ns := env.Namespace(t)
	mustCreate(t, secret(ns, "later", corev1.SecretTypeTLS))
	mustCreate(t, secret(ns, "token", "helm.sh/release.v1"))
	r := startSource(t)
	laterKey := objects.Key{Kind: objects.KindSecret, Namespace: ns, Name: "later"}
	if r.initial[laterKey] != nil {
		t.Fatal("an unreferenced Secret was passed on")
	}

	p := proxy(ns, "app", "later")
	mustCreate(t, p)
	r.waitChange(t, laterKey, "the Secret once referenced", func(c objects.Change) bool { return c.Object != nil })

	// A Secret of a type that cannot hold a certificate is passed on
	// without its data: the build reports it is not a TLS Secret.
	p.Spec.VirtualHost.TLS.SecretName = "token"
	if err := crdClient(t).Put().Namespace(ns).Resource("httpproxies").Name(p.Name).Body(p).Do(context.Background()).Into(p); err != nil {
		t.Fatal(err)
	}
	tokenKey := objects.Key{Kind: objects.KindSecret, Namespace: ns, Name: "token"}
	c := r.waitChange(t, tokenKey, "the token Secret", func(c objects.Change) bool { return c.Object != nil })
	if d := c.Object.(*corev1.Secret).Data; len(d) != 0 {
		t.Errorf("a service account token's data was kept: %v", d)
	}
	r.waitChange(t, laterKey, "the no longer referenced Secret to be withdrawn", func(c objects.Change) bool { return c.Object == nil })
}

// TestStatusWriteIsNotAChange: writing an HTTPProxy's status must not
// cause a build, a spec change must.
func TestStatusWriteIsNotAChange(t *testing.T) {
	ns := env.Namespace(t)
	p := proxy(ns, "app", "")
	mustCreate(t, p)
	marker := proxy(ns, "marker", "")
	mustCreate(t, marker)
	r := startSource(t, ns)
	key := objects.Key{Kind: objects.KindHTTPProxy, Namespace: ns, Name: "app"}

	p.Status.CurrentStatus = switchyardv1.StatusValid
	if err := crdClient(t).Put().Namespace(ns).Resource("httpproxies").Name(p.Name).SubResource("status").Body(p).Do(context.Background()).Into(p); err != nil {
		t.Fatal(err)
	}
	// Events of one informer arrive in order: once the marker's change is
	// out, the status write has been seen.
	marker.Spec.VirtualHost.Fqdn = "marker2.example.com"
	if err := crdClient(t).Put().Namespace(ns).Resource("httpproxies").Name(marker.Name).Body(marker).Do(context.Background()).Into(marker); err != nil {
		t.Fatal(err)
	}
	r.waitChange(t, objects.Key{Kind: objects.KindHTTPProxy, Namespace: ns, Name: "marker"}, "the marker", func(objects.Change) bool { return true })
	if cs := r.changesTo(key); len(cs) != 0 {
		t.Fatalf("a status write became %d change(s)", len(cs))
	}
	if got := r.src.Get(key); got == nil || got.(*switchyardv1.HTTPProxy).Status.CurrentStatus != switchyardv1.StatusValid {
		t.Fatalf("Get does not return the cached status: %#v", got)
	}
}
