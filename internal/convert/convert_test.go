package convert_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"

	"github.com/switchyard-dev/switchyard/internal/convert"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/render"
)

var update = flag.Bool("update", false, "rewrite testdata/expected.yaml and testdata/warnings.txt")

// TestConvertDirectory converts testdata/contour, a directory of Contour
// manifests, and compares the output and the warnings with
// testdata/expected.yaml and testdata/warnings.txt. It then loads the
// output as `switchyard render` would and expects every object valid:
// what convert carries over, Switchyard serves.
func TestConvertDirectory(t *testing.T) {
	files, err := convert.Files([]string{"testdata/contour"})
	if err != nil {
		t.Fatal(err)
	}
	var out, warnings bytes.Buffer
	for _, f := range files {
		in, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		b, ws, err := convert.Convert(filepath.ToSlash(f), in)
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString("---\n")
		out.Write(b)
		for _, w := range ws {
			warnings.WriteString(w.String() + "\n")
		}
	}
	compare(t, "testdata/expected.yaml", out.Bytes())
	compare(t, "testdata/warnings.txt", warnings.Bytes())

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "converted.yaml"), out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, problems, err := dirsource.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("loading the output: %s", p)
	}
	res, err := render.Run(snap, render.Options{DAG: dag.Options{IngressClassName: "contour"}, Group: "envoy"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Statuses) == 0 {
		t.Fatal("no statuses: nothing was loaded")
	}
	for _, st := range res.Statuses {
		if st.State != switchyardv1.StatusValid {
			t.Errorf("%s is %s: %s", st.Key, st.State, st.Description)
		}
	}
}

// TestConvertKeepsSwitchyardObjects: a manifest already converted comes
// out as it went in, with nothing to warn about.
func TestConvertKeepsSwitchyardObjects(t *testing.T) {
	in := "apiVersion: switchyard.dev/v1\nkind: HTTPProxy\nmetadata:\n  name: a\nspec:\n  unknownField: 1\n"
	b, ws, err := convert.Convert("in.yaml", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != in || len(ws) != 0 {
		t.Errorf("got %q with warnings %v, want the input unchanged and none", b, ws)
	}
}

func compare(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")); d != "" {
		t.Errorf("%s differs (-want +got); run with -update if the change is intended:\n%s", path, d)
	}
}

// TestConvertDropsFalseQuietly: an unknown field set to false or null
// changes nothing when left out, so it is not warned about; true is.
func TestConvertDropsFalseQuietly(t *testing.T) {
	in := "apiVersion: projectcontour.io/v1\nkind: HTTPProxy\nmetadata: {name: a}\nspec:\n  virtualhost:\n    fqdn: a.example.com\n    tls:\n      secretName: s\n      notAField: %s\n"
	for value, warned := range map[string]bool{"false": false, "null": false, "true": true} {
		_, ws, err := convert.Convert("in.yaml", strings.NewReader(strings.Replace(in, "%s", value, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if (len(ws) > 0) != warned {
			t.Errorf("notAField: %s: warnings %v", value, ws)
		}
	}
}
