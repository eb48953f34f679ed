package render_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/golden"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// goldenOutputs renders every golden case of the translator for every
// group it has goldens for, with the resources left encoded or not.
func goldenOutputs(t testing.TB, encoded bool) map[string]*render.Output {
	t.Helper()
	dirs, _, err := golden.Dirs(filepath.Join("..", "translator", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 10 {
		t.Fatalf("only %d golden cases found", len(dirs))
	}
	outs := map[string]*render.Output{}
	for _, dir := range dirs {
		c, err := golden.Load(dir, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for _, group := range c.Groups() {
			out, err := render.Run(c.Snapshot, render.Options{DAG: c.DAG, Translator: c.Translator, Group: xdsres.Group(group), Encoded: encoded})
			if err != nil {
				t.Fatal(err)
			}
			out.SourceProblems = c.Problems
			out.NoDataPlane()
			outs[filepath.Base(dir)+"/"+group] = out
		}
	}
	return outs
}

// sameAsReference checks that both formats print exactly the bytes the
// reference printer prints, and that a resource on its own prints as the
// admin endpoint streams it, exactly as the reference does. printed, when
// not nil, is what prints: the same output with its resources encoded.
func sameAsReference(t testing.TB, name string, out, printed *render.Output) {
	t.Helper()
	if printed == nil {
		printed = out
	}
	for _, format := range []string{"json", "yaml"} {
		want, werr := render.ReferenceEncode(out, format)
		got, gerr := printed.Encode(format)
		if werr != nil && gerr == nil && format == "yaml" && strings.Contains(werr.Error(), "control characters are not allowed") {
			// The YAML decoder refuses the raw control characters (DEL,
			// C1) that encoding/json leaves unescaped, so the old way
			// failed on them; printing the tree directly escapes them.
			var v any
			if err := yaml.Unmarshal(got, &v); err != nil {
				t.Fatalf("%s -o yaml: output does not parse: %v", name, err)
			}
			continue
		}
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%s -o %s: error %v, the reference's %v", name, format, gerr, werr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s -o %s differs from the reference at byte %d:\n%s", name, format, firstDiff(got, want), diffContext(got, want))
		}
	}
	for _, ms := range out.Resources {
		for _, m := range ms {
			sameResourceJSON(t, name, m)
		}
	}
}

func sameResourceJSON(t testing.TB, name string, m proto.Message) {
	t.Helper()
	want, werr := render.ReferenceJSON(m)
	got, gerr := render.ResourceJSON(m)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%s: ResourceJSON error %v, the reference's %v", name, gerr, werr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: ResourceJSON differs from the reference:\n%s", name, diffContext(got, want))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func diffContext(got, want []byte) string {
	i := firstDiff(got, want)
	from := max(0, i-300)
	return fmt.Sprintf("got:\n%s\nwant:\n%s", got[from:min(len(got), i+200)], want[from:min(len(want), i+200)])
}

// TestEncodeSameAsReference prints every golden case of the translator
// both ways.
func TestEncodeSameAsReference(t *testing.T) {
	encoded := goldenOutputs(t, true)
	for name, out := range goldenOutputs(t, false) {
		if encoded[name] == nil {
			t.Fatalf("%s: not rendered with Encoded", name)
		}
		sameAsReference(t, name, out, encoded[name])
	}
	sameAsReference(t, "empty", &render.Output{Resources: map[string][]proto.Message{}}, nil)
}

// TestEncodeSameAsReferenceAtScale prints the directory of
// SWITCHYARD_BENCH_DIR (written by `switchyard gen`) both ways, for every
// group. It takes a minute at 1,000 proxies.
func TestEncodeSameAsReferenceAtScale(t *testing.T) {
	dir := os.Getenv("SWITCHYARD_BENCH_DIR")
	if dir == "" {
		t.Skip("SWITCHYARD_BENCH_DIR is not set: point it at a directory written by `switchyard gen`")
	}
	snap, _, err := dirsource.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range []xdsres.Group{xdsres.GroupEnvoy, xdsres.GroupGRPC, xdsres.GroupDNS} {
		out, err := render.Run(snap, render.Options{Translator: translator.DefaultOptions(), Group: group})
		if err != nil {
			t.Fatal(err)
		}
		out.NoDataPlane()
		printed, err := render.Run(snap, render.Options{Translator: translator.DefaultOptions(), Group: group, Encoded: true})
		if err != nil {
			t.Fatal(err)
		}
		printed.NoDataPlane()
		sameAsReference(t, string(group), out, printed)
	}
}

// TestEncodeLargeResources prints resources larger than what the printer
// holds before it writes (a route configuration of thousands of hosts,
// as the HTTPS listener is at scale) between small ones, decoded and
// encoded, as the reference does.
func TestEncodeLargeResources(t *testing.T) {
	large := func(name string, hosts int) *envoy_config_route_v3.RouteConfiguration {
		rc := &envoy_config_route_v3.RouteConfiguration{Name: name}
		for i := range hosts {
			rc.VirtualHosts = append(rc.VirtualHosts, &envoy_config_route_v3.VirtualHost{
				Name: fmt.Sprintf("host-%d", i), Domains: []string{fmt.Sprintf("host-%d.example.com", i), "*"}})
		}
		return rc
	}
	msgs := []proto.Message{large("a", 3), large("b", 5000), large("c", 1), large("d", 20000), large("e", 0)}
	url := "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	var encoded []*xdsres.Resource
	for _, m := range msgs {
		r, err := xdsres.Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		encoded = append(encoded, r)
	}
	for _, n := range []int{1, 2, len(msgs)} {
		out := &render.Output{Resources: map[string][]proto.Message{url: msgs[:n]}}
		sameAsReference(t, fmt.Sprintf("%d large", n), out, render.EncodedOutput(map[string][]*xdsres.Resource{url: encoded[:n]}))
	}
}
