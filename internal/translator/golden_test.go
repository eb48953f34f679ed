package translator_test

import (
	"bytes"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-dev/switchyard/internal/golden"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata from each case's input.yaml, and delete those of cases without one")

// testCert is the certificate every case that needs one embeds, so that
// all cases share one static, reviewable certificate (see testdata/certs).
const testCert = "testdata/certs/tls.crt"

// TestGolden translates each testdata/<case>/input.yaml for every consumer
// group, exactly as `switchyard render --group <group>` would, and compares
// the output with testdata/<case>/<group>.yaml. It also checks every
// group's resources with xdscheck.Check (ValidateAll, nested typed_configs
// included, and references) and the grpc group against what grpc-go's xDS
// client accepts (see checkResources). The incremental engine builds the
// same cases the way `serve` does and must give the same bytes (see its
// golden_test.go).
//
// A case directory may also hold options.yaml, for what a command-line
// flag rather than an object decides (see golden.Options); without one the
// case renders with the defaults of `switchyard render`.
//
// Run `go test ./internal/translator -run TestGolden -update` to rewrite
// the goldens after a deliberate change, then review the diff.
func TestGolden(t *testing.T) {
	cases, stale, err := golden.Dirs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range stale {
		staleGoldens(t, dir)
	}
	if len(cases) == 0 {
		t.Fatal("no golden cases under testdata")
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) { goldenCase(t, dir) })
	}
}

// staleGoldens deletes (with -update) or reports the outputs of a case
// whose input is gone; with -update the directory goes too once empty.
func staleGoldens(t *testing.T, dir string) {
	t.Helper()
	if *update {
		defer os.Remove(dir) // fails, harmlessly, while anything else is left in it
	}
	for _, g := range xdsres.Names() {
		path := filepath.Join(dir, g+".yaml")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if *update {
			if err := os.Remove(path); err != nil {
				t.Error(err)
			}
			continue
		}
		t.Errorf("%s has no input.yaml: delete it, or run with -update", path)
	}
}

func goldenCase(t *testing.T, dir string) {
	c, err := golden.Load(dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	checkEmbeddedCert(t, c.Input)
	for _, group := range c.Groups() {
		t.Run(group, func(t *testing.T) {
			out, err := render.Run(c.Snapshot, render.Options{DAG: c.DAG, Translator: c.Translator, Group: xdsres.Group(group)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Document(out)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, c.Path(group), got)
			checkResources(t, group, out)
		})
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s does not exist: run with -update to create it", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n"))
		t.Errorf("%s differs (-want +got); run with -update if the change is intended:\n%s", path, d)
	}
}

// checkEmbeddedCert makes sure a case that embeds a certificate embeds the
// committed one, so that regenerating it cannot leave a case behind.
func checkEmbeddedCert(t *testing.T, input []byte) {
	t.Helper()
	if !bytes.Contains(input, []byte("BEGIN CERTIFICATE")) {
		return
	}
	cert, err := os.ReadFile(testCert)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimSpace(string(cert))
	// YAML block scalars indent the PEM; compare line by line.
	var lines []string
	for l := range strings.SplitSeq(body, "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	var inLines []string
	for l := range strings.SplitSeq(string(input), "\n") {
		inLines = append(inLines, strings.TrimSpace(l))
	}
	joined := "\n" + strings.Join(inLines, "\n") + "\n"
	if !strings.Contains(joined, "\n"+strings.Join(lines, "\n")+"\n") {
		t.Errorf("input.yaml embeds a certificate other than %s", testCert)
	}
}

// checkResources checks every rendered resource, in memory: what
// xdscheck.Check finds (ValidateAll on it and on each typed_config inside,
// encoding, go-control-plane's consistency, names that do not resolve);
// for grpc, what grpc-go would NACK; for dns, the shape DNS balancers
// expect.
func checkResources(t *testing.T, group string, out *render.Output) {
	t.Helper()
	res, err := golden.Resources(out.Resources)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range xdscheck.Check(xdsres.Group(group), res) {
		t.Error(err)
	}
	for _, msgs := range out.Resources {
		for _, m := range msgs {
			checkPacked(t, m)
		}
	}
	switch group {
	case "grpc":
		for _, err := range translator.GRPCProblems(res) {
			t.Errorf("grpc-go would reject this: %v", err)
		}
	case "dns":
		for _, err := range dnsProblems(res) {
			t.Error(err)
		}
	}
}

// dnsProblems checks the dns group's contract: clusters and load
// assignments only, paired by DNS name, with every endpoint's health set;
// the cluster of an ExternalName Service (a CNAME) has its name inline and
// no load assignment.
func dnsProblems(r *translator.Resources) []error {
	var errs []error
	if n := len(r.Listeners) + len(r.ScopedRoutes) + len(r.Routes) + len(r.Secrets); n > 0 {
		errs = append(errs, errors.New("the dns group has listeners, routes or secrets"))
	}
	var eds []*envoy_config_cluster_v3.Cluster
	for _, c := range r.Clusters {
		if c.GetType() != envoy_config_cluster_v3.Cluster_STRICT_DNS {
			eds = append(eds, c)
			continue
		}
		eps := c.GetLoadAssignment().GetEndpoints()
		if len(eps) != 1 || len(eps[0].GetLbEndpoints()) != 1 || eps[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress().GetAddress() == "" {
			errs = append(errs, errors.New("dns cluster "+c.GetName()+": a CNAME's cluster must hold exactly one endpoint, the external name"))
		}
	}
	if len(eds) != len(r.Endpoints) {
		errs = append(errs, errors.New("the dns group has a different number of EDS clusters and load assignments"))
	}
	for i := range min(len(eds), len(r.Endpoints)) {
		c, cla := eds[i], r.Endpoints[i]
		if c.GetName() != cla.GetClusterName() || c.GetEdsClusterConfig().GetServiceName() != c.GetName() {
			errs = append(errs, errors.New("dns cluster "+c.GetName()+" is not paired with its load assignment by name"))
		}
		for _, l := range cla.GetEndpoints() {
			for _, ep := range l.GetLbEndpoints() {
				switch ep.GetHealthStatus() {
				case envoy_config_core_v3.HealthStatus_HEALTHY, envoy_config_core_v3.HealthStatus_DRAINING:
				default:
					errs = append(errs, errors.New("dns "+c.GetName()+": an endpoint's health is "+ep.GetHealthStatus().String()))
				}
			}
		}
	}
	return errs
}
