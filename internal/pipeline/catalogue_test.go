package pipeline

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

// The gate's catalogue: every bad input of internal/dag's catalogue
// (testdata/bad, read through the directory source), and the bad
// EndpointSlices, Services and Secrets below, built as objects so that no
// source's checks stand in the way. Each is added to a valid input, in a
// later batch and in the first build. Nothing invalid may reach a client;
// what the good proxy was served stays byte for byte; and where the gate
// has to withhold something, the good proxy's status names the value.

// testCertificate is the certificate and key the translator's golden
// tests use.
func testCertificate(t *testing.T) (cert, key []byte) {
	t.Helper()
	dir := filepath.Join("..", "translator", "testdata", "certs")
	cert, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
	if err == nil {
		key, err = os.ReadFile(filepath.Join(dir, "tls.key"))
	}
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// catalogueBase is the valid input: the Services and Secrets the dag
// catalogue refers to, endpoints for them, and the good proxy.
func catalogueBase(t *testing.T) []runtime.Object {
	cert, key := testCertificate(t)
	var out []runtime.Object
	for _, s := range []string{"shop/app", "shop/app2", "other/app"} {
		ns, name, _ := strings.Cut(s, "/")
		out = append(out, &corev1.Service{ObjectMeta: meta(ns, name), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "http", Port: 80}, {Name: "https", Port: 443, AppProtocol: ptr("tls")},
		}}})
		es := slice(name, "10.0.0.1")
		es.Namespace = ns
		es.Ports = append(es.Ports, discoveryv1.EndpointPort{Name: ptr("https"), Port: ptr[int32](8443)})
		out = append(out, es)
	}
	for _, s := range []string{"shop/tls", "other/tls"} {
		ns, name, _ := strings.Cut(s, "/")
		out = append(out, &corev1.Secret{ObjectMeta: meta(ns, name), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": cert, "tls.key": key}})
	}
	out = append(out, &corev1.Secret{ObjectMeta: meta("shop", "ca"), Data: map[string][]byte{"ca.crt": cert}})
	good := proxyTo("good", "good.example.com", "app")
	good.CreationTimestamp = metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	return append(out, good)
}

// gateCase is one bad input, and the text the good proxy's
// ResourceRejected error must hold ("" when the bad input must not touch
// the good proxy at all), or its EndpointInvalid warning: endpoints no
// client can use are left out by the translator, so that the gate never
// sees them.
type gateCase struct {
	name string
	objs []runtime.Object
	want string
	warn string
	// rootNamespaces is the DAG option some dag cases set.
	rootNamespaces []string
	// externalNames is --enable-external-name-services, which others set.
	externalNames bool
}

// badSlice is an extra EndpointSlice of shop/app, the good proxy's
// Service.
func badSlice(typ discoveryv1.AddressType, port int32, addrs ...string) *discoveryv1.EndpointSlice {
	es := slice("app", "")
	es.Name = "app-bad"
	es.AddressType = typ
	es.Ports[0].Port = &port
	es.Endpoints = []discoveryv1.Endpoint{{Addresses: addrs}}
	return es
}

func objectCases() []gateCase {
	v4, v6, fqdn := discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN
	ok := func(a ...string) []string { return a }
	appWith := func(mut func(*corev1.Service)) *corev1.Service {
		s := svc("app")
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "https", Port: 443, AppProtocol: ptr("tls")})
		mut(s)
		return s
	}
	return []gateCase{
		{name: "ipv4 octet over 255", objs: []runtime.Object{badSlice(v4, 8080, ok("10.0.0.999")...)}, warn: `EndpointSlice shop/app-bad: endpoint "10.0.0.999" is left out: not an IP address`},
		{name: "ipv4 not an address", objs: []runtime.Object{badSlice(v4, 8080, ok("not-an-ip")...)}, warn: `EndpointSlice shop/app-bad: endpoint "not-an-ip" is left out: not an IP address`},
		{name: "ipv4 with a prefix length", objs: []runtime.Object{badSlice(v4, 8080, ok("10.0.0.1/24")...)}, warn: `EndpointSlice shop/app-bad: endpoint "10.0.0.1/24" is left out: not an IP address`},
		{name: "ipv4 with a port", objs: []runtime.Object{badSlice(v4, 8080, ok("10.0.0.1:80")...)}, warn: `EndpointSlice shop/app-bad: endpoint "10.0.0.1:80" is left out: not an IP address`},
		{name: "ipv4 empty", objs: []runtime.Object{badSlice(v4, 8080, ok("")...)}, warn: `EndpointSlice shop/app-bad: endpoint "" is left out: not an IP address`},
		{name: "ipv4 leading zeros", objs: []runtime.Object{badSlice(v4, 8080, ok("010.0.0.1")...)}, warn: `EndpointSlice shop/app-bad: endpoint "010.0.0.1" is left out: not an IP address`},
		{name: "ipv6 bad group", objs: []runtime.Object{badSlice(v6, 8080, ok("fe80::zz")...)}, warn: `EndpointSlice shop/app-bad: endpoint "fe80::zz" is left out: not an IP address`},
		{name: "ipv6 two elisions", objs: []runtime.Object{badSlice(v6, 8080, ok("2001:db8::1::2")...)}, warn: `EndpointSlice shop/app-bad: endpoint "2001:db8::1::2" is left out: not an IP address`},
		{name: "ipv6 bracketed", objs: []runtime.Object{badSlice(v6, 8080, ok("[2001:db8::1]")...)}, warn: `EndpointSlice shop/app-bad: endpoint "[2001:db8::1]" is left out: not an IP address`},
		// Clients take an IPv6 address in an IPv4 slice: only the
		// source can say the family is wrong.
		{name: "ipv6 in an ipv4 slice", objs: []runtime.Object{badSlice(v4, 8080, ok("2001:db8::7")...)}, want: ""},
		{name: "second address bad", objs: []runtime.Object{badSlice(v4, 8080, ok("10.0.0.7", "10.0.0.999")...)}, want: ""},
		{name: "fqdn slice", objs: []runtime.Object{badSlice(fqdn, 8080, ok("app.example.com")...)}, warn: "EndpointSlice shop/app-bad is left out: addressType FQDN"},
		{name: "port 70000", objs: []runtime.Object{badSlice(v4, 70000, ok("10.0.0.8")...)}, warn: `EndpointSlice shop/app-bad is left out: port "http": 70000 is not a port (1-65535)`},
		{name: "port 65536", objs: []runtime.Object{badSlice(v4, 65536, ok("10.0.0.8")...)}, warn: `EndpointSlice shop/app-bad is left out: port "http": 65536 is not a port (1-65535)`},
		{name: "port 0", objs: []runtime.Object{badSlice(v4, 0, ok("10.0.0.8")...)}, warn: `EndpointSlice shop/app-bad is left out: port "http": 0 is not a port (1-65535)`},
		{name: "port negative", objs: []runtime.Object{badSlice(v4, -1, ok("10.0.0.8")...)}, warn: `EndpointSlice shop/app-bad is left out: port "http": -1 is not a port (1-65535)`},
		{name: "bad address and port", objs: []runtime.Object{badSlice(v4, 70000, ok("10.0.0.999")...)}, warn: `EndpointSlice shop/app-bad is left out: port "http": 70000 is not a port (1-65535)`},
		{name: "service port 70000", objs: []runtime.Object{appWith(func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "huge", Port: 70000})
		})}, want: ""},
		{name: "service target port 70000", objs: []runtime.Object{appWith(func(s *corev1.Service) {
			s.Spec.Ports[0].TargetPort = intstr.FromInt32(70000)
		})}, want: ""},
		{name: "service cluster IP garbage", objs: []runtime.Object{appWith(func(s *corev1.Service) {
			s.Spec.ClusterIP = "10.0.0.999"
		})}, want: ""},
		{name: "service protocol UDP", objs: []runtime.Object{appWith(func(s *corev1.Service) {
			s.Spec.Ports[0].Protocol = corev1.ProtocolUDP
		})}, want: ""},
		{name: "secret not PEM", objs: []runtime.Object{&corev1.Secret{ObjectMeta: meta("shop", "tls"), Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": []byte("garbage"), "tls.key": []byte("garbage")}}}, want: ""},
		{name: "secret not UTF-8", objs: []runtime.Object{&corev1.Secret{ObjectMeta: meta("shop", "ca"),
			Data: map[string][]byte{"ca.crt": {0xff, 0xfe, 0x00}}}}, want: ""},
	}
}

// dagCases reads internal/dag's catalogue through the directory source.
func dagCases(t *testing.T) []gateCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "dag", "testdata", "bad", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases under internal/dag/testdata/bad: %v", err)
	}
	var out []gateCase
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "case.yaml"), body, 0o644); err != nil {
			t.Fatal(err)
		}
		snap, _, err := dirsource.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		c := gateCase{name: "dag/" + strings.TrimSuffix(filepath.Base(f), ".yaml")}
		for _, ch := range SnapshotChanges(snap) {
			c.objs = append(c.objs, ch.Object)
		}
		sc := bufio.NewScanner(bytes.NewReader(body))
		for sc.Scan() && strings.HasPrefix(sc.Text(), "#") {
			if ns, ok := strings.CutPrefix(sc.Text(), "# options: root-namespaces="); ok {
				c.rootNamespaces = []string{ns}
			}
			if sc.Text() == "# options: enable-external-name-services" {
				c.externalNames = true
			}
		}
		out = append(out, c)
	}
	return out
}

func TestGateCatalogue(t *testing.T) {
	cases := append(objectCases(), dagCases(t)...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Run("added", func(t *testing.T) { runAdded(t, c) })
			t.Run("first build", func(t *testing.T) { runFirst(t, c) })
		})
	}
	t.Logf("%d bad inputs fed to the gate", len(cases))
}

func catalogueOptions(c gateCase, clk *clock) Config {
	cfg := Config{Translator: translator.DefaultOptions(), Now: clk.now}
	cfg.DAG.RootNamespaces = c.rootNamespaces
	cfg.DAG.ExternalNameServices = c.externalNames
	return cfg
}

// runAdded adds a case to the valid input in a second batch.
func runAdded(t *testing.T, c gateCase) {
	clk := newClock()
	cache := xdscache.New()
	p := New(cache, catalogueOptions(c, clk))
	if _, err := p.Apply(upserts(t, catalogueBase(t)...)); err != nil {
		t.Fatal(err)
	}
	good := objects.Key{Kind: objects.KindHTTPProxy, Namespace: "shop", Name: "good"}
	before := versions(cache)
	produced := p.engine.Produced(good)
	if len(produced) == 0 {
		t.Fatal("the good proxy produces nothing")
	}
	clk.add(time.Second)
	res, err := p.Apply(upserts(t, c.objs...))
	if err != nil && !strings.Contains(err.Error(), "UTF-8") {
		t.Fatal(err)
	}
	clk.add(DefaultLinger + DefaultWarmup)
	if _, err := p.Tick(); err != nil {
		t.Fatal(err)
	}
	assertServedValid(t, cache)
	after := versions(cache)
	if c.want != "" || len(p.Rejected()) > 0 {
		// Something was withheld: everything stays as it was.
		for k, v := range before {
			if after[k] != v {
				t.Errorf("%s changed from %s to %s", k, v, after[k])
			}
		}
	}
	for _, r := range produced {
		k := string(r.Group) + " " + r.Type + " " + r.Name
		if after[k] != before[k] && !changedByCase(c) {
			t.Errorf("the good proxy's %s changed", k)
		}
	}
	st := statusOf(p.Statuses(), "shop", "good")
	if c.want != "" {
		if rejectedWith(st, c.want) == "" {
			t.Errorf("shop/good does not say %q: %+v", c.want, st)
		}
		if rejectedWith(statusOf(res.StatusUpdate.Changed, "shop", "good"), c.want) == "" {
			t.Errorf("the batch's status update does not carry shop/good's condition")
		}
	}
	if c.warn != "" {
		checkWarned(t, st, c)
		if warnedWith(statusOf(res.StatusUpdate.Changed, "shop", "good"), c.warn) == "" {
			t.Errorf("the batch's status update does not carry shop/good's warning")
		}
	}
}

// checkWarned checks that a case's endpoints left out are a warning of the
// good proxy, which stays valid, and that the gate withheld nothing.
func checkWarned(t *testing.T, st *dag.Status, c gateCase) {
	t.Helper()
	if warnedWith(st, c.warn) == "" || st.State != switchyardv1.StatusValid {
		t.Errorf("shop/good must stay valid and warn %q: %+v", c.warn, st)
	}
}

// changedByCase reports whether a case legitimately changes a resource
// of the good proxy: it replaces a Service or Secret the good proxy uses
// with one whose content differs but is valid, or adds good endpoints.
func changedByCase(c gateCase) bool {
	for _, o := range c.objs {
		switch o := o.(type) {
		case *corev1.Service, *corev1.Secret:
			return true
		case *discoveryv1.EndpointSlice:
			if o.Namespace == "shop" && o.Labels[objects.ServiceNameLabel] == "app" {
				return true
			}
		}
	}
	return false
}

// runFirst builds the case and the valid input together.
func runFirst(t *testing.T, c gateCase) {
	cache := xdscache.New()
	p := New(cache, catalogueOptions(c, newClock()))
	if _, err := p.Apply(upserts(t, append(catalogueBase(t), c.objs...)...)); err != nil && !strings.Contains(err.Error(), "UTF-8") {
		t.Fatal(err)
	}
	assertServedValid(t, cache)
	if c.want != "" && rejectedWith(statusOf(p.Statuses(), "shop", "good"), c.want) == "" {
		t.Errorf("shop/good does not say %q: %+v", c.want, statusOf(p.Statuses(), "shop", "good"))
	}
	if c.warn != "" {
		checkWarned(t, statusOf(p.Statuses(), "shop", "good"), c)
	}
}
