package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/switchyard-dev/switchyard/examples/deploy"
)

// TestDeployManifests checks examples/deploy as `kubectl apply
// --dry-run=server` would: the API server validates, defaults and admits
// every object (the CRDs are installed for real, and so is the
// namespace). It also runs the switchyard containers' arguments through
// this binary's own flag parsing, and the Envoy init container's for real,
// loading the bootstrap it writes as Envoy would.
func TestDeployManifests(t *testing.T) {
	env := kubeEnv.Get(t)
	ctx := context.Background()
	manifests := deploy.Manifests()

	// The Secrets `switchyard certgen` makes for this namespace are the
	// ones the Deployments mount.
	secrets, err := runCommand(t, "certgen", "--format", "secrets", "--dns-name", "switchyard."+deployNamespace+".svc")
	if err != nil {
		t.Fatalf("certgen: %v\n%s", err, secrets)
	}
	var secretNames []string
	for _, name := range deploy.Names(manifests) {
		objs, warnings, err := env.Apply(ctx, manifests[name], true)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, w := range warnings {
			t.Errorf("%s: the API server warns: %s", name, w)
		}
		if name == "00-namespace.yaml" {
			// Namespaced objects need it; certgen's Secrets go there.
			got, _, err := env.Apply(ctx, []byte(secrets), true)
			if err != nil {
				t.Fatalf("certgen's Secrets: %v", err)
			}
			for _, o := range got {
				if o.GetNamespace() != deployNamespace {
					t.Errorf("certgen writes Secret %s into namespace %q, the manifests use %q", o.GetName(), o.GetNamespace(), deployNamespace)
				}
				secretNames = append(secretNames, o.GetName())
			}
		}
		t.Logf("%s: %d objects admitted", name, len(objs))
	}

	for _, d := range deployments(t, manifests) {
		pod := d.Spec.Template.Spec
		for _, v := range pod.Volumes {
			if v.Secret != nil && !slices.Contains(secretNames, v.Secret.SecretName) {
				t.Errorf("Deployment %s mounts Secret %s, which certgen does not make (%v)", d.Name, v.Secret.SecretName, secretNames)
			}
		}
		for _, c := range append(pod.InitContainers, pod.Containers...) {
			if strings.Contains(c.Image, "switchyard") {
				checkArgs(t, d.Name+"/"+c.Name, c)
			}
		}
	}
}

// checkArgs parses a switchyard container's arguments with this binary's
// commands; a bootstrap is run, into a temporary file, and loaded.
func checkArgs(t *testing.T, where string, c corev1.Container) {
	t.Helper()
	cmd, rest, err := newRootCommand().Find(c.Args)
	if err != nil || cmd.Name() == "switchyard" {
		t.Fatalf("%s: %v is not a switchyard command: %v", where, c.Args, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if cmd.Name() != "bootstrap" {
		return
	}
	out := filepath.Join(t.TempDir(), "envoy.json")
	args := append(append([]string{}, c.Args...), "--out", out)
	if _, err := runCommand(t, args...); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	bs := loadBootstrap(t, b)
	xds := bs.GetStaticResources().GetClusters()[0]
	addr := xds.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
	if addr.GetAddress() != "switchyard."+deployNamespace+".svc" || addr.GetPortValue() != 8001 || xds.GetTransportSocket() == nil {
		t.Errorf("%s: Envoy would dial %s:%d (TLS %v), not the Service switchyard over mutual TLS", where, addr.GetAddress(), addr.GetPortValue(), xds.GetTransportSocket() != nil)
	}
}

func deployments(t *testing.T, manifests map[string][]byte) []appsv1.Deployment {
	t.Helper()
	var out []appsv1.Deployment
	for _, name := range deploy.Names(manifests) {
		for _, doc := range strings.Split(string(manifests[name]), "\n---\n") {
			var d appsv1.Deployment
			if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if d.Kind == "Deployment" {
				out = append(out, d)
			}
		}
	}
	if len(out) != 2 {
		t.Fatalf("%d Deployments in examples/deploy, want switchyard and envoy", len(out))
	}
	return out
}

// TestKustomizationListsEveryManifest keeps `kubectl apply -k
// examples/deploy` in step with the files.
func TestKustomizationListsEveryManifest(t *testing.T) {
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(deploy.Kustomization(), &k); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range deploy.Names(deploy.CRDs()) {
		want = append(want, "crds/"+n)
	}
	want = append(want, deploy.Names(deploy.Manifests())...)
	sort.Strings(want)
	got := slices.Sorted(slices.Values(k.Resources))
	if !slices.Equal(got, want) {
		t.Fatalf("%s lists %v, the directory holds %v", deploy.KustomizationFile, got, want)
	}
}
