// Package deploy embeds the manifests that install Switchyard in a
// cluster, so that tests (internal/testenv, and the server-side dry run in
// cmd/switchyard) apply exactly the files users apply.
package deploy

import (
	"embed"
	"io/fs"
	"path"
	"sort"
)

//go:embed crds/*.yaml *.yaml
var files embed.FS

// CRDs returns the generated CustomResourceDefinitions, one YAML document
// per file, by file name.
func CRDs() map[string][]byte { return read("crds") }

// Manifests returns the other manifests of this directory (namespace,
// RBAC, Deployments, Services), by file name.
func Manifests() map[string][]byte {
	m := read(".")
	delete(m, KustomizationFile)
	return m
}

// KustomizationFile lists every manifest, for kubectl apply -k.
const KustomizationFile = "kustomization.yaml"

// Kustomization returns KustomizationFile.
func Kustomization() []byte { return read(".")[KustomizationFile] }

// Names returns the keys of m in order, the order users apply them in.
func Names(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func read(dir string) map[string][]byte {
	out := map[string][]byte{}
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		panic(err) // the embed pattern guarantees the directory exists
	}
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".yaml" {
			continue
		}
		b, err := files.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			panic(err)
		}
		out[e.Name()] = b
	}
	return out
}
