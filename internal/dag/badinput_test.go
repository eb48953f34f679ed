package dag_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// The catalogue of bad inputs: each testdata/bad/<case>.yaml is a
// manifest plus, in its leading comments, what must come of it:
//
//	# expect: <Kind> <namespace>/<name> <Type>/<Reason> <text naming the field>
//	# expect: problem <line> <text of the source's message>
//	# options: root-namespaces=<ns>
//	# options: rate-limit-service=<namespace>/<name>
//	# options: fallback-certificate=<namespace>/<name>
//	# options: enable-external-name-services
//
// Each case is loaded through the directory source together with
// badBase (a valid proxy, Services and Secrets) and built. The test
// checks that nothing panics, that each expected status or source problem
// is there, that no other object is invalid (the good proxy stays valid),
// and that every consumer group's resources pass xdscheck.Check. More
// cases, too large to keep as files, are in badinput_large_test.go.

// badBase is loaded with every case: the objects the cases refer to.
func badBase() string {
	cert, key := dag.SharedCertificate()
	pem := func(b []byte) string { return strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "\n    ") }
	var b strings.Builder
	for _, s := range []string{"shop/app", "shop/app2", "other/app"} {
		ns, name, _ := strings.Cut(s, "/")
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\nspec: {ports: [{name: http, port: 80}, {name: https, port: 443, appProtocol: tls}]}\n---\n", name, ns)
	}
	for _, s := range []string{"shop/tls", "other/tls"} {
		ns, name, _ := strings.Cut(s, "/")
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: %s}\ntype: kubernetes.io/tls\nstringData:\n  tls.crt: |\n    %s\n  tls.key: |\n    %s\n---\n", name, ns, pem(cert), pem(key))
	}
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata: {name: ca, namespace: shop}\nstringData:\n  ca.crt: |\n    %s\n---\n", pem(cert))
	b.WriteString(`apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: good, namespace: shop, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  virtualhost: {fqdn: good.example.com}
  routes:
  - services: [{name: app, port: 80}]
`)
	return b.String()
}

// expectation is one "# expect:" line.
type expectation struct {
	problemLine int // > 0 for a source problem
	key         objects.Key
	typ, reason string
	text        string
}

type badCase struct {
	name string
	// body is the manifest; generated cases give objs instead.
	body    []byte
	objs    []runtime.Object
	expects []expectation
	opts    dag.Options
}

func TestBadInputs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "bad", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases under testdata/bad: %v", err)
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := parseBadCase(t, strings.TrimSuffix(filepath.Base(f), ".yaml"), body)
		t.Run(c.name, func(t *testing.T) { runBadCase(t, c) })
	}
	large := largeBadCases()
	t.Logf("%d bad inputs covered: %d files under testdata/bad here, %d generated in TestLargeBadInputs", len(files)+len(large), len(files), len(large))
}

func parseBadCase(t *testing.T, name string, body []byte) badCase {
	t.Helper()
	c := badCase{name: name, body: body}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			break
		}
		if opt, ok := strings.CutPrefix(line, "# options: root-namespaces="); ok {
			c.opts.RootNamespaces = []string{opt}
		}
		if opt, ok := strings.CutPrefix(line, "# options: rate-limit-service="); ok {
			ns, name, _ := strings.Cut(opt, "/")
			c.opts.RateLimitService = &types.NamespacedName{Namespace: ns, Name: name}
		}
		if opt, ok := strings.CutPrefix(line, "# options: fallback-certificate="); ok {
			ns, name, _ := strings.Cut(opt, "/")
			c.opts.FallbackCertificate = &types.NamespacedName{Namespace: ns, Name: name}
		}
		if line == "# options: enable-external-name-services" {
			c.opts.ExternalNameServices = true
		}
		if e, ok := strings.CutPrefix(line, "# expect: "); ok {
			c.expects = append(c.expects, parseExpectation(t, e))
		}
	}
	if len(c.expects) == 0 {
		t.Fatalf("%s: no '# expect:' line", name)
	}
	return c
}

func parseExpectation(t *testing.T, e string) expectation {
	t.Helper()
	f := strings.SplitN(e, " ", 4)
	if len(f) < 3 {
		t.Fatalf("bad expectation %q", e)
	}
	if f[0] == "problem" {
		n, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("bad expectation %q", e)
		}
		return expectation{problemLine: n, text: strings.Join(f[2:], " ")}
	}
	kind, ok := objects.KindFromString(f[0])
	ns, name, ok2 := strings.Cut(f[1], "/")
	typ, reason, ok3 := strings.Cut(f[2], "/")
	if !ok || !ok2 || !ok3 || len(f) < 4 {
		t.Fatalf("bad expectation %q", e)
	}
	return expectation{key: objects.Key{Kind: kind, Namespace: ns, Name: name}, typ: typ, reason: reason, text: f[3]}
}

// runBadCase loads a case beside badBase and checks what comes of it.
func runBadCase(t *testing.T, c badCase) *dag.Result {
	snap, problems := loadBadCase(t, c)
	res := dag.Build(snap, c.opts)
	expected := map[objects.Key]bool{}
	for _, e := range c.expects {
		if e.problemLine > 0 {
			checkProblem(t, problems, e)
			continue
		}
		expected[e.key] = true
		checkCondition(t, res, e)
	}
	if len(problems) > 0 && !hasProblemExpectation(c.expects) {
		t.Errorf("unexpected source problems: %v", problems)
	}
	for _, st := range res.Statuses {
		if !expected[st.Key] && st.State == switchyardv1.StatusInvalid {
			t.Errorf("%v is invalid too: %v", st.Key, st.Errors)
		}
		if st.Key.Name == "good" && st.State != switchyardv1.StatusValid {
			t.Errorf("the good proxy is %s: %v", st.State, st.Errors)
		}
	}
	groups := translateAll(res.DAG, snap)
	for _, g := range xdsres.Groups {
		for _, err := range xdscheck.Check(g, groups[g]) {
			t.Errorf("group %s: %v", g, err)
		}
	}
	return res
}

// badBaseObjects are badBase's objects, read once.
var badBaseObjects = sync.OnceValues(func() ([]runtime.Object, error) {
	dir, err := os.MkdirTemp("", "switchyard-bad-base-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(badBase()), 0o644); err != nil {
		return nil, err
	}
	snap, problems, err := dirsource.Load(dir)
	if err == nil && len(problems) > 0 {
		err = fmt.Errorf("badBase: %v", problems)
	}
	if err != nil {
		return nil, err
	}
	return snapshotObjects(snap), nil
})

func snapshotObjects(s *objects.Snapshot) []runtime.Object {
	var out []runtime.Object
	for _, o := range s.Services {
		out = append(out, o)
	}
	for _, o := range s.Secrets {
		out = append(out, o)
	}
	for _, o := range s.HTTPProxies {
		out = append(out, o)
	}
	return out
}

// loadBadCase reads a case's manifest through the directory source (or
// takes its objects) and adds badBase's objects.
func loadBadCase(t *testing.T, c badCase) (*objects.Snapshot, []dirsource.Problem) {
	t.Helper()
	base, err := badBaseObjects()
	if err != nil {
		t.Fatal(err)
	}
	snap := objects.NewSnapshot()
	var problems []dirsource.Problem
	if c.body != nil {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "case.yaml"), c.body, 0o644); err != nil {
			t.Fatal(err)
		}
		if snap, problems, err = dirsource.Load(dir); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range append(base, c.objs...) {
		if _, err := snap.Upsert(o.DeepCopyObject()); err != nil {
			t.Fatal(err)
		}
	}
	return snap, problems
}

func checkProblem(t *testing.T, problems []dirsource.Problem, e expectation) {
	t.Helper()
	for _, p := range problems {
		if strings.HasSuffix(p.File, "case.yaml") && p.Line == e.problemLine && strings.Contains(p.Message, e.text) {
			return
		}
	}
	t.Errorf("no source problem on line %d saying %q; got %v", e.problemLine, e.text, problems)
}

func hasProblemExpectation(es []expectation) bool {
	for _, e := range es {
		if e.problemLine > 0 {
			return true
		}
	}
	return false
}

func checkCondition(t *testing.T, res *dag.Result, e expectation) {
	t.Helper()
	for _, st := range res.Statuses {
		if st.Key != e.key {
			continue
		}
		if st.State != switchyardv1.StatusInvalid {
			t.Errorf("%v is %s, want invalid", e.key, st.State)
		}
		for _, c := range st.Errors {
			if c.Type == e.typ && c.Reason == e.reason && strings.Contains(c.Message, e.text) {
				return
			}
		}
		t.Errorf("%v has no %s/%s error naming %q; errors: %v", e.key, e.typ, e.reason, e.text, st.Errors)
		return
	}
	t.Errorf("no status for %v", e.key)
}
