package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// contourNames are the plural, singular and short names of Contour's CRDs
// (projectcontour.io): a cluster migrating runs both controllers, and
// kubectl resolves a short name to one resource only.
var contourNames = []string{
	"httpproxies", "httpproxy", "proxy", "proxies",
	"tlscertificatedelegations", "tlscertificatedelegation", "tlscerts",
	"extensionservices", "extensionservice",
}

// TestCRDShortNamesDoNotCollideWithContour: `kubectl get syproxy` must
// mean Switchyard's HTTPProxy even where Contour's CRDs are installed.
func TestCRDShortNamesDoNotCollideWithContour(t *testing.T) {
	files, err := filepath.Glob("../../examples/deploy/crds/switchyard.dev_*.yaml")
	if err != nil || len(files) < 3 {
		t.Fatalf("CRDs: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(crd.Spec.Names.ShortNames) == 0 {
			t.Errorf("%s: no short names", f)
		}
		for _, n := range crd.Spec.Names.ShortNames {
			if slices.Contains(contourNames, n) {
				t.Errorf("%s: short name %q is also a name of Contour's CRDs", f, n)
			}
		}
	}
}
