package docsite

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// operationsPage lists the metrics and example alerts.
const operationsPage = "site/operations.md"

var (
	// codeMetricRE finds the control plane's metric names: string
	// literals, in NewDesc and in the collectors' options.
	codeMetricRE = regexp.MustCompile(`"(switchyard_[a-z_]+)"`)
	// pluginMetricRE finds the CoreDNS plugin's, which CoreDNS prefixes
	// with its namespace and the plugin's name.
	pluginMetricRE = regexp.MustCompile(`Namespace: plugin\.Namespace, Subsystem: pluginName, Name: "([a-z_]+)"`)
	// pageMetricRE finds metric names in the page, series suffixes of
	// histograms dropped.
	pageMetricRE = regexp.MustCompile(`\b((?:coredns_)?switchyard_[a-z_]*[a-z])\b`)
)

// codeMetrics returns the names of the metrics the code registers.
func codeMetrics(t *testing.T, root string) []string {
	t.Helper()
	var names []string
	for _, dir := range []string{"internal", "cmd"} {
		err := fs.WalkDir(os.DirFS(root), dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			b, err := os.ReadFile(filepath.Join(root, p))
			if err != nil {
				return err
			}
			for _, m := range codeMetricRE.FindAllSubmatch(b, -1) {
				names = append(names, string(m[1]))
			}
			for _, m := range pluginMetricRE.FindAllSubmatch(b, -1) {
				names = append(names, "coredns_switchyard_"+string(m[1]))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// TestOperationsMetrics checks that site/operations.md names every metric
// the code registers, and no metric it does not, so that the page and its
// alerts follow a rename.
func TestOperationsMetrics(t *testing.T) {
	root := filepath.Join("..", "..")
	code := codeMetrics(t, root)
	if len(code) < 10 {
		t.Fatalf("found only %d metrics in the code (%q): has the way they are declared changed?", len(code), code)
	}
	page, err := os.ReadFile(filepath.Join(root, operationsPage))
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, m := range pageMetricRE.FindAllSubmatch(page, -1) {
		name := string(m[1])
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(code, base) {
				name = base
			}
		}
		named = append(named, name)
	}
	slices.Sort(named)
	named = slices.Compact(named)
	if diff := cmp.Diff(code, named); diff != "" {
		t.Errorf("metrics of the code (-) and of %s (+) differ:\n%s", operationsPage, diff)
	}
}

// TestOperationsAlerts checks that the example alerting rules are valid
// YAML of Prometheus's rule-file shape.
func TestOperationsAlerts(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", operationsPage))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(page), "```yaml\ngroups:")
	if !ok {
		t.Fatal("no ```yaml block starting with groups: in the page")
	}
	block, _, _ = strings.Cut("groups:"+block, "```")
	var rules struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict([]byte(block), &rules); err != nil {
		t.Fatalf("the alerting rules: %v", err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" || r.Expr == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("group %s: rule %q lacks an alert name, expr, severity or summary", g.Name, r.Alert)
			}
		}
	}
	if n == 0 {
		t.Error("no alerting rules")
	}
}
