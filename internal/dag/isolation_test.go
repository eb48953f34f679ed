package dag_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestIsolation is decision 6 of site/architecture.md as a property: for generated valid
// sets of objects, adding any case of the bad-input catalogue (with a newer
// creation time, as a newly applied object has) leaves the output of every
// object already there byte-identical — every status, and every xDS
// resource of every group that existed before. The bad objects may add
// resources of their own (an invalid route answers 503 under its own host),
// and their own filter chains on the shared HTTPS listener, nothing else.
func TestIsolation(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "bad", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases under testdata/bad: %v", err)
	}
	r := rand.New(rand.NewSource(6))
	checked := 0
	seeds := 3
	if raceEnabled {
		seeds = 1
	}
	for seed := range seeds {
		valid := validSet(r, 4+seed*3)
		before := buildYAML(t, valid, "")
		for _, st := range before.res.Statuses {
			if st.State != switchyardv1.StatusValid {
				t.Fatalf("seed %d: the generated set is not valid: %v %v", seed, st.Key, st.Errors)
			}
		}
		for _, f := range files {
			bad, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimSuffix(filepath.Base(f), ".yaml")
			t.Run(fmt.Sprintf("%d/%s", seed, name), func(t *testing.T) {
				compareIsolated(t, before, buildYAML(t, valid, string(bad)))
			})
			checked++
		}
	}
	t.Logf("%d (valid set, bad input) pairs checked", checked)
}

// built is one build's statuses and wire bytes.
type built struct {
	res   *dag.Result
	wire  map[string][]byte
	group map[xdsres.Group]*translator.Resources
}

// buildYAML loads the valid set, the catalogue's base and the bad case
// through the directory source; the bad case's objects are given a newer
// creation time than anything already there.
func buildYAML(t *testing.T, valid, bad string) built {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"valid.yaml": valid, "base.yaml": badBase(), "bad.yaml": bad} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap, _, err := dirsource.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	newer := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, p := range snap.HTTPProxies {
		if p.CreationTimestamp.IsZero() {
			p.CreationTimestamp = newer
		}
	}
	res := dag.Build(snap, dag.Options{})
	groups := translateAll(res.DAG, snap)
	for _, g := range xdsres.Groups {
		for _, err := range xdscheck.Check(g, groups[g]) {
			t.Errorf("group %s: %v", g, err)
		}
	}
	return built{res: res, wire: wireBytes(t, groups), group: groups}
}

func compareIsolated(t *testing.T, before, after built) {
	t.Helper()
	statuses := map[objects.Key]*dag.Status{}
	for _, st := range after.res.Statuses {
		statuses[st.Key] = st
	}
	for _, st := range before.res.Statuses {
		if got := statuses[st.Key]; !reflect.DeepEqual(st, got) {
			t.Errorf("status of %v changed:\nbefore %+v\nafter  %+v", st.Key, st, got)
		}
	}
	for key, b := range before.wire {
		a, ok := after.wire[key]
		switch {
		case !ok:
			t.Errorf("%s is gone", key)
		case bytes.Equal(a, b):
		case strings.Contains(key, "Listener"):
			compareListener(t, key, b, a)
		default:
			t.Errorf("%s changed", key)
		}
	}
}

// compareListener allows a shared listener to differ only by filter chains
// for server names it did not serve before.
func compareListener(t *testing.T, key string, before, after []byte) {
	t.Helper()
	var b, a envoy_config_listener_v3.Listener
	if err := proto.Unmarshal(before, &b); err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(after, &a); err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, fc := range b.GetFilterChains() {
		served[fmt.Sprint(fc.GetFilterChainMatch().GetServerNames())] = true
	}
	var kept []*envoy_config_listener_v3.FilterChain
	for _, fc := range a.GetFilterChains() {
		if served[fmt.Sprint(fc.GetFilterChainMatch().GetServerNames())] {
			kept = append(kept, fc)
		}
	}
	a.FilterChains = kept
	if !proto.Equal(&a, &b) {
		t.Errorf("%s changed beyond new filter chains", key)
	}
}

// validSet writes n teams' worth of valid objects: Services with
// endpoints, certificates, an ExtensionService, and root proxies (some
// with TLS, authorization, weighted services, includes) whose host names
// are under <team>.example.com. Creation times are in 2020.
func validSet(r *rand.Rand, n int) string {
	var b strings.Builder
	cert, key := dag.SharedCertificate()
	pem := func(p []byte) string { return strings.ReplaceAll(strings.TrimSpace(string(p)), "\n", "\n    ") }
	for i := range n {
		ns := fmt.Sprintf("team-%d", i)
		for j := range 3 {
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata: {name: svc-%d, namespace: %s}\nspec: {ports: [{port: 80}]}\n---\n", j, ns)
			fmt.Fprintf(&b, "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: svc-%d-x, namespace: %s, labels: {kubernetes.io/service-name: svc-%d}}\naddressType: IPv4\nports: [{port: 8080}]\nendpoints: [{addresses: [10.%d.%d.1], zone: z%d}]\n---\n", j, ns, j, i, j, j%2)
		}
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata: {name: tls, namespace: %s}\ntype: kubernetes.io/tls\nstringData:\n  tls.crt: |\n    %s\n  tls.key: |\n    %s\n---\n", ns, pem(cert), pem(key))
		fmt.Fprintf(&b, "apiVersion: switchyard.dev/v1alpha1\nkind: ExtensionService\nmetadata: {name: authz, namespace: %s}\nspec: {protocol: h2c, services: [{name: svc-2, port: 80}]}\n---\n", ns)
		for k := range 1 + r.Intn(3) {
			b.WriteString(validRoot(r, ns, k))
		}
	}
	return b.String()
}

func validRoot(r *rand.Rand, ns string, k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: switchyard.dev/v1\nkind: HTTPProxy\nmetadata: {name: root-%d, namespace: %s, creationTimestamp: \"2020-01-01T00:00:00Z\"}\nspec:\n  virtualhost:\n    fqdn: h%d.%s.example.com\n", k, ns, k, ns)
	if r.Intn(2) == 0 {
		b.WriteString("    tls: {secretName: tls}\n")
		if r.Intn(2) == 0 {
			b.WriteString("    authorization: {extensionRef: {name: authz}}\n")
		}
		if r.Intn(3) == 0 {
			b.WriteString("    jwtProviders: [{name: idp, default: true, remoteJWKS: {uri: \"https://idp.example.com/jwks\"}}]\n")
		}
	}
	if r.Intn(3) == 0 {
		b.WriteString("    corsPolicy: {allowOrigin: [\"*\"], allowMethods: [GET], maxAge: 10m}\n    rateLimitPolicy: {local: {requests: 100, unit: second}}\n")
	}
	if r.Intn(3) == 0 {
		b.WriteString("    ipAllowPolicy: [{source: Peer, cidr: 10.0.0.0/8}, {source: Remote, cidr: \"2001:db8::/32\"}]\n")
	}
	fmt.Fprintf(&b, "  includes: [{name: child-%d, conditions: [{prefix: /child}]}]\n  routes:\n", k)
	for j := range 1 + r.Intn(3) {
		fmt.Fprintf(&b, "  - conditions: [{prefix: /r%d}]\n    services: [{name: svc-%d, port: 80, weight: %d}, {name: svc-%d, port: 80, weight: %d}]\n", j, r.Intn(2), 1+r.Intn(9), 2, 1+r.Intn(9))
		if r.Intn(4) == 0 {
			b.WriteString("    ipDenyPolicy: [{source: Peer, cidr: 192.168.0.0/16}]\n")
		}
	}
	fmt.Fprintf(&b, "---\napiVersion: switchyard.dev/v1\nkind: HTTPProxy\nmetadata: {name: child-%d, namespace: %s}\nspec:\n  routes:\n  - name: web\n    services: [{name: svc-%d, port: 80}]\n---\n", k, ns, r.Intn(3))
	return b.String()
}
