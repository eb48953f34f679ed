package dirsource

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// writeTree writes files (path relative to dir → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// svc returns a Service manifest; port tells versions apart.
func svc(ns, name string, port int) string {
	return "apiVersion: v1\nkind: Service\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
		"\nspec:\n  ports:\n  - port: " + strconv.Itoa(port) + "\n"
}

func snapshotKeys(s *objects.Snapshot) map[objects.Key]bool {
	out := map[objects.Key]bool{}
	add := func(k objects.Kind, nn types.NamespacedName) { out[objects.NewKey(k, nn)] = true }
	for nn := range s.HTTPProxies {
		add(objects.KindHTTPProxy, nn)
	}
	for nn := range s.Services {
		add(objects.KindService, nn)
	}
	for nn := range s.Secrets {
		add(objects.KindSecret, nn)
	}
	for name := range s.Nodes {
		out[objects.Key{Kind: objects.KindNode, Name: name}] = true
	}
	for nn := range s.EndpointSlices {
		add(objects.KindEndpointSlice, nn)
	}
	for nn := range s.ExtensionServices {
		add(objects.KindExtensionService, nn)
	}
	for nn := range s.Delegations {
		add(objects.KindTLSCertificateDelegation, nn)
	}
	return out
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		opts     []Option
		wantKeys []objects.Key
		want     []wantProblem
		wantFile []string // File of each problem, relative to the root
		check    func(t *testing.T, s *objects.Snapshot)
	}{
		{
			name: "recursive, both extensions, other files ignored",
			files: map[string]string{
				"a.yaml":          svc("x", "a", 1),
				"sub/b.yml":       svc("x", "b", 1),
				"sub/deep/c.YAML": svc("x", "c", 1),
				"README.md":       "not yaml: [",
				"sub/notes.txt":   "kind: Service",
			},
			wantKeys: []objects.Key{key(objects.KindService, "x", "a"), key(objects.KindService, "x", "b"), key(objects.KindService, "x", "c")},
		},
		{
			name: "hidden files and directories are skipped",
			files: map[string]string{
				"a.yaml":          svc("x", "a", 1),
				".hidden.yaml":    svc("x", "h1", 1),
				".git/x.yaml":     svc("x", "h2", 1),
				"sub/.swp/y.yaml": svc("x", "h3", 1),
			},
			wantKeys: []objects.Key{key(objects.KindService, "x", "a")},
		},
		{
			name: "duplicates: first in walk order wins, the later one is reported",
			files: map[string]string{
				// The directory "a" is walked before the file "a.yaml".
				"a/z.yaml": svc("x", "dup", 1),
				"a.yaml":   "# first line\n" + svc("x", "dup", 2) + "---\n" + svc("x", "dup", 3),
			},
			wantKeys: []objects.Key{key(objects.KindService, "x", "dup")},
			want: []wantProblem{
				{line: 2, severity: Error, kind: "Service", name: "dup", contains: "a/z.yaml:1, which comes first"},
				{line: 11, severity: Error, kind: "Service", name: "dup", contains: "a/z.yaml:1"},
			},
			wantFile: []string{"a.yaml", "a.yaml"},
			check: func(t *testing.T, s *objects.Snapshot) {
				if p := s.Services[types.NamespacedName{Namespace: "x", Name: "dup"}].Spec.Ports[0].Port; p != 1 {
					t.Errorf("winning port = %d, want 1 (from a/z.yaml)", p)
				}
			},
		},
		{
			name: "duplicate within one file",
			files: map[string]string{
				"a.yaml": svc("x", "dup", 1) + "---\n" + svc("x", "dup", 2),
			},
			wantKeys: []objects.Key{key(objects.KindService, "x", "dup")},
			want:     []wantProblem{{line: 10, severity: Error, contains: "a.yaml:1, which comes first"}},
			wantFile: []string{"a.yaml"},
		},
		{
			name: "files over the size limit are skipped",
			files: map[string]string{
				"big.yaml":   svc("x", "big", 1) + "# " + strings.Repeat("x", 200) + "\n",
				"small.yaml": svc("x", "small", 1),
			},
			opts:     []Option{WithMaxFileSize(150)},
			wantKeys: []objects.Key{key(objects.KindService, "x", "small")},
			want:     []wantProblem{{severity: Error, contains: "more than the limit of 150"}},
			wantFile: []string{"big.yaml"},
		},
		{
			name: "a broken file does not stop the others",
			files: map[string]string{
				"a.yaml": "kind: [",
				"b.yaml": svc("x", "b", 1),
			},
			wantKeys: []objects.Key{key(objects.KindService, "x", "b")},
			want:     []wantProblem{{line: 1, severity: Error}},
			wantFile: []string{"a.yaml"},
		},
		{
			name:  "empty tree",
			files: map[string]string{"empty.yaml": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tt.files)
			snap, problems, err := Load(root, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			got := snapshotKeys(snap)
			if len(got) != len(tt.wantKeys) {
				t.Errorf("keys = %v, want %v", got, tt.wantKeys)
			}
			for _, k := range tt.wantKeys {
				if !got[k] {
					t.Errorf("missing %v; have %v", k, got)
				}
			}
			matchProblems(t, problems, tt.want)
			for i, f := range tt.wantFile {
				if want := filepath.Join(root, f); problems[i].File != want {
					t.Errorf("problem %d file = %s, want %s", i, problems[i].File, want)
				}
			}
			if tt.check != nil {
				tt.check(t, snap)
			}
		})
	}
}

func TestLoadLinks(t *testing.T) {
	root := t.TempDir()
	other := t.TempDir()
	writeTree(t, other, map[string]string{"in-other.yaml": svc("x", "other", 1), "file.yaml": svc("x", "linked", 1)})
	writeTree(t, root, map[string]string{"a.yaml": svc("x", "a", 1)})
	mustSymlink(t, other, filepath.Join(root, "dirlink"))
	mustSymlink(t, filepath.Join(other, "file.yaml"), filepath.Join(root, "link.yaml"))
	mustSymlink(t, filepath.Join(other, "missing.yaml"), filepath.Join(root, "dangling.yaml"))

	// The root itself may be a link.
	linkedRoot := filepath.Join(t.TempDir(), "root")
	mustSymlink(t, root, linkedRoot)

	snap, problems, err := Load(linkedRoot)
	if err != nil {
		t.Fatal(err)
	}
	got := snapshotKeys(snap)
	for _, k := range []objects.Key{key(objects.KindService, "x", "a"), key(objects.KindService, "x", "linked")} {
		if !got[k] {
			t.Errorf("missing %v; have %v", k, got)
		}
	}
	if len(got) != 2 {
		t.Errorf("keys = %v, want a and linked only", got)
	}
	matchProblems(t, problems, []wantProblem{
		{severity: Error, contains: "symbolic link to a missing file"},
		{severity: Warning, contains: "symbolic link to a directory is not followed"},
	})
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks not available: %v", err)
	}
}

func TestLoadRootErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.yaml")
	writeTree(t, dir, map[string]string{"f.yaml": svc("x", "a", 1)})
	tests := []struct {
		root string
		want string
	}{
		{filepath.Join(dir, "missing"), "does not exist: create it"},
		{file, "is a file, not a directory: pass the directory"},
	}
	for _, tt := range tests {
		_, _, err := Load(tt.root)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%s) error = %v, want one containing %q", tt.root, err, tt.want)
		}
	}
}

func TestLoadUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.yaml": svc("x", "a", 1), "locked/b.yaml": svc("x", "b", 1), "c.yaml": svc("x", "c", 1)})
	if err := os.Chmod(filepath.Join(root, "c.yaml"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(root, "locked"), 0o755) })
	snap, problems, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Services) != 1 {
		t.Errorf("services = %v, want a only", snap.Services)
	}
	matchProblems(t, problems, []wantProblem{
		{severity: Error, contains: "cannot read"},
		{severity: Error, contains: "cannot list directory"},
	})
}

func TestLoadSnapshotObjects(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {k: v}\n"})
	snap, problems, err := Load(root)
	if err != nil || len(problems) != 0 {
		t.Fatalf("err %v, problems %v", err, problems)
	}
	s := snap.Secrets[types.NamespacedName{Namespace: "default", Name: "s"}]
	if s == nil || string(s.Data["k"]) != "v" || s.Type != "" && s.Type != corev1.SecretTypeOpaque {
		t.Errorf("secret = %+v", s)
	}
}
