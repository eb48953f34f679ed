//go:build unix

package dirsource

import (
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO named like a manifest would block a reader forever.
func TestLoadSkipsFIFO(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.yaml": svc("x", "a", 1)})
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.yaml"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	snap, problems, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Services) != 1 {
		t.Errorf("services = %v, want a", snap.Services)
	}
	matchProblems(t, problems, []wantProblem{{severity: Error, contains: "not a regular file"}})
}
