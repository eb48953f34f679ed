package scalegen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"sigs.k8s.io/yaml"
)

// Write writes the set as manifests under dir, one file per namespace
// (<namespace>.yaml), which `switchyard serve --source` and `render` read.
// dir is created if needed; files of the same names are replaced.
func (s *Set) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	work := make(chan Namespace)
	errs := make(chan error, len(s.Namespaces))
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ns := range work {
				if err := s.writeNamespace(dir, ns); err != nil {
					errs <- err
				}
			}
		}()
	}
	for _, ns := range s.Namespaces {
		work <- ns
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

func (s *Set) writeNamespace(dir string, ns Namespace) error {
	var buf bytes.Buffer
	for i, o := range s.Objects[ns.Start:ns.End] {
		b, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("namespace %s: object %d: %w", ns.Name, i, err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return os.WriteFile(filepath.Join(dir, ns.Name+".yaml"), buf.Bytes(), 0o644)
}
