package explain_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/explain"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
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
	out, err := render.Run(snap, render.Options{Translator: translator.DefaultOptions(), Group: group})
	if err != nil {
		t.Fatal(err)
	}
	r := explain.FromRender(out)
	loaded.Store(name+"/"+group, r)
	return r
}
