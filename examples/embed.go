// Package examples embeds the quickstart manifests, so that the switchyard
// binary can serve them when started without --source: the one command a
// newcomer runs works from any directory.
package examples

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed quickstart/*.yaml
var quickstart embed.FS

// WriteQuickstart copies the embedded quickstart manifests into dir.
func WriteQuickstart(dir string) error {
	return fs.WalkDir(quickstart, "quickstart", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := quickstart.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, filepath.Base(path)), b, 0o644)
	})
}
