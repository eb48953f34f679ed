package dag_test

import (
	"bytes"
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// FuzzBuild builds random object graphs — proxies, includes, services,
// endpoint slices, secrets, delegations and extension services, made from
// the input by the generator in gen_test.go — and checks that the builder
// never panics, that every object served gets a status whose errors name
// the field at fault, that the build is deterministic, and that every
// consumer group's resources pass xdscheck.Check: ValidateAll (nested
// typed_configs included), go-control-plane's consistency check, and every
// cross-reference. Seeds are in testdata/fuzz/FuzzBuild.
func FuzzBuild(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{1}, 64))
	f.Add([]byte("\x05\x03\x02\x01\x02\x01\x00\x03\x01\x00\x02\x04\x01\x00\x01\x00\x03\x00\x02\x01\x00\x00\x03"))
	f.Fuzz(checkGraph)
}

// TestRandomGraphs runs FuzzBuild's checks over a fixed set of random
// inputs, so that every `go test` covers more than the seeds.
func TestRandomGraphs(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	n := 2000
	if raceEnabled {
		n = 200
	}
	for i := range n {
		data := make([]byte, r.Intn(600))
		r.Read(data)
		t.Run(strconv.Itoa(i), func(t *testing.T) { checkGraph(t, data) })
	}
}

// checkGraph builds the graph the input describes and checks it.
func checkGraph(t *testing.T, data []byte) {
	c := &choices{data: data}
	opts := c.options()
	objs := genObjects(c)
	snap := snapshotOf(t, objs...)
	res := dag.Build(snap, opts)
	checkStatuses(t, snap, opts, res)
	checkSecrets(t, snap, res.DAG)
	groups := translateAll(res.DAG, snap)
	for _, g := range xdsres.Groups {
		for _, err := range xdscheck.Check(g, groups[g]) {
			t.Errorf("group %s: %v", g, err)
		}
	}
	again := dag.Build(snapshotOf(t, objs...), opts)
	if !reflect.DeepEqual(res.Statuses, again.Statuses) {
		t.Error("two builds of the same objects gave different statuses")
	}
	if a, b := wireBytes(t, groups), wireBytes(t, translateAll(again.DAG, snap)); !reflect.DeepEqual(a, b) {
		t.Error("two builds of the same objects gave different resources")
	}
}

func (c *choices) options() dag.Options {
	var o dag.Options
	if c.oneIn(6) {
		o.RootNamespaces = []string{"a"}
	}
	if c.oneIn(6) {
		o.GlobalAuthorization = &types.NamespacedName{Namespace: "a", Name: "auth"}
	}
	o.MaxIncludeDepth = c.intn(4)
	return o
}

func snapshotOf(t testing.TB, objs ...runtime.Object) *objects.Snapshot {
	t.Helper()
	s := objects.NewSnapshot()
	for _, o := range objs {
		if _, err := s.Upsert(o.DeepCopyObject()); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func translateAll(d *dag.DAG, snap *objects.Snapshot) map[xdsres.Group]*translator.Resources {
	o := translator.DefaultOptions()
	return map[xdsres.Group]*translator.Resources{
		xdsres.GroupEnvoy: translator.Envoy(d, snap, o),
		xdsres.GroupGRPC:  translator.GRPC(d, snap, o),
		xdsres.GroupDNS:   translator.DNS(d, snap, o),
		xdsres.GroupMesh:  translator.MeshNode(d, snap, o),
	}
}

// wireBytes encodes every resource of every group as it would be sent,
// keyed by group, type and name.
func wireBytes(t testing.TB, groups map[xdsres.Group]*translator.Resources) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for g, r := range groups {
		for _, m := range r.All() {
			res, err := xdsres.NewResource(m)
			if err != nil {
				t.Fatalf("group %s: %v", g, err)
			}
			out[string(g)+" "+res.Any.GetTypeUrl()+" "+res.Name] = res.Any.GetValue()
		}
	}
	return out
}

// checkStatuses asserts that every object the build should have read has
// exactly one status, in a known state, and that each error names a field
// (spec..., or the global authorization flag) with a type and a reason.
func checkStatuses(t *testing.T, snap *objects.Snapshot, opts dag.Options, res *dag.Result) {
	t.Helper()
	want := map[objects.Key]bool{}
	for nn, p := range snap.HTTPProxies {
		if p.Spec.IngressClassName == opts.IngressClassName {
			want[objects.NewKey(objects.KindHTTPProxy, nn)] = true
		}
	}
	for nn := range snap.ExtensionServices {
		want[objects.NewKey(objects.KindExtensionService, nn)] = true
	}
	for nn := range snap.Delegations {
		want[objects.NewKey(objects.KindTLSCertificateDelegation, nn)] = true
	}
	seen := map[objects.Key]bool{}
	for _, st := range res.Statuses {
		if seen[st.Key] || !want[st.Key] {
			t.Errorf("status for %v: duplicate or unexpected", st.Key)
		}
		seen[st.Key] = true
		checkStatus(t, st)
	}
	if len(seen) != len(want) {
		t.Errorf("%d statuses for %d objects", len(seen), len(want))
	}
}

func checkStatus(t *testing.T, st *dag.Status) {
	t.Helper()
	switch st.State {
	case switchyardv1.StatusValid, switchyardv1.StatusOrphaned:
		if len(st.Errors) > 0 {
			t.Errorf("%v is %s with errors %v", st.Key, st.State, st.Errors)
		}
	case switchyardv1.StatusInvalid:
		if len(st.Errors) == 0 || st.Description == "" {
			t.Errorf("%v is invalid without an error", st.Key)
		}
	default:
		t.Errorf("%v has state %q", st.Key, st.State)
	}
	for _, e := range append(append([]switchyardv1.SubCondition(nil), st.Errors...), st.Warnings...) {
		if e.Type == "" || e.Reason == "" || !namesField(e.Message) {
			t.Errorf("%v: sub-condition %+v does not name a field", st.Key, e)
		}
	}
}

// checkSecrets is the secrets rule, computed independently of the builder:
// a Secret may be served only when an object of its own namespace refers
// to it, or an object of a namespace it is delegated to does.
func checkSecrets(t *testing.T, snap *objects.Snapshot, d *dag.DAG) {
	t.Helper()
	allowed := map[types.NamespacedName]bool{}
	refer := func(ns, ref string) {
		secretNS, name, ok := strings.Cut(ref, "/")
		if !ok {
			secretNS, name = ns, ref
		}
		nn := types.NamespacedName{Namespace: secretNS, Name: name}
		if secretNS == ns || delegatedTo(snap, nn, ns) {
			allowed[nn] = true
		}
	}
	for nn, p := range snap.HTTPProxies {
		if vh := p.Spec.VirtualHost; vh != nil && vh.TLS != nil {
			refer(nn.Namespace, vh.TLS.SecretName)
			if cv := vh.TLS.ClientValidation; cv != nil {
				refer(nn.Namespace, cv.CACertificate)
			}
		}
		for _, r := range p.Spec.Routes {
			for _, s := range r.Services {
				if s.UpstreamValidation != nil {
					refer(nn.Namespace, s.UpstreamValidation.CACertificate)
				}
			}
		}
		if tp := p.Spec.TCPProxy; tp != nil {
			for _, s := range tp.Services {
				if s.UpstreamValidation != nil {
					refer(nn.Namespace, s.UpstreamValidation.CACertificate)
				}
			}
		}
	}
	for nn, e := range snap.ExtensionServices {
		if e.Spec.UpstreamValidation != nil {
			refer(nn.Namespace, e.Spec.UpstreamValidation.CACertificate)
		}
	}
	for _, s := range d.Secrets {
		if !allowed[s.Source] {
			t.Errorf("Secret %s is served as %q, but no object that may use it refers to it", s.Source, s.Name)
		}
	}
}

func delegatedTo(snap *objects.Snapshot, secret types.NamespacedName, ns string) bool {
	for nn, d := range snap.Delegations {
		if nn.Namespace != secret.Namespace {
			continue
		}
		for _, del := range d.Spec.Delegations {
			if del.SecretName != secret.Name {
				continue
			}
			for _, target := range del.TargetNamespaces {
				if target == ns || target == "*" {
					return true
				}
			}
		}
	}
	return false
}

func namesField(msg string) bool {
	return strings.HasPrefix(msg, "spec") || strings.HasPrefix(msg, "global authorization")
}
