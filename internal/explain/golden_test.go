package explain_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/explain"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// goldenDir holds the translator's golden cases: explain is tested on the
// resources those inputs produce, so the requests below exercise exactly
// what the golden files show.
const goldenDir = "../translator/testdata"

var loaded sync.Map // "case/group" -> *explain.Resources

// resources renders a golden case's input.yaml for a group, as `switchyard
// explain --source` does.
func resources(t *testing.T, name, group string) *explain.Resources {
	t.Helper()
	if r, ok := loaded.Load(name + "/" + group); ok {
		return r.(*explain.Resources)
	}
	input, err := os.ReadFile(filepath.Join(goldenDir, name, "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "input.yaml"), input, 0o644); err != nil {
		t.Fatal(err)
	}
	snap, _, err := dirsource.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := render.Run(snap, render.Options{Translator: translator.DefaultOptions(), Group: xdsres.Group(group)})
	if err != nil {
		t.Fatal(err)
	}
	r := explain.FromRender(out)
	loaded.Store(name+"/"+group, r)
	return r
}

// TestEveryGoldenHost explains a request to every host of every golden
// case, over both schemes and for both groups: each gets a decision with a
// reason, and the result marshals.
func TestEveryGoldenHost(t *testing.T) {
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(goldenDir, e.Name(), "input.yaml")); err != nil {
			continue
		}
		for _, group := range explain.Groups {
			res := resources(t, e.Name(), group)
			hosts := map[string]bool{}
			for _, rc := range res.Routes {
				for _, vh := range rc.GetVirtualHosts() {
					hosts[vh.GetName()] = true
				}
			}
			for host := range hosts {
				for _, scheme := range []string{"http", "https"} {
					r, err := explain.Explain(res, explain.Request{URL: scheme + "://" + host + "/some/path?x=1", Group: group})
					if err != nil {
						t.Fatalf("%s %s %s: %v", e.Name(), group, host, err)
					}
					if r.Decision.Kind == "" || r.Decision.Reason == "" {
						t.Errorf("%s %s %s://%s: no decision:\n%s", e.Name(), group, scheme, host, r.Text())
					}
					if _, err := json.Marshal(r); err != nil {
						t.Errorf("%s: %v", e.Name(), err)
					}
					n++
				}
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d requests explained: are the golden cases where this test looks?", n)
	}
}
