package main

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func parseCert(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("no PEM in %q", b)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCertgenFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	if _, errOut, code := run(t, "certgen", "--out", dir, "--dns-name", "localhost,xds.example.com", "--ip-address", "127.0.0.1,10.1.2.3"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ca, srv, cli := parseCert(t, read("ca.crt")), parseCert(t, read("server.crt")), parseCert(t, read("client.crt"))
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, name := range []string{"localhost", "xds.example.com", "127.0.0.1", "10.1.2.3"} {
		if _, err := srv.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("server certificate for %s: %v", name, err)
		}
	}
	if _, err := cli.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	for _, key := range []string{"ca.key", "server.key", "client.key"} {
		if fi, err := os.Stat(filepath.Join(dir, key)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, err %v", key, fi.Mode(), err)
		}
	}
	// A second run must not replace the CA by accident.
	if _, errOut, code := run(t, "certgen", "--out", dir); code != 2 || !strings.Contains(errOut, "--overwrite") {
		t.Errorf("second run: exit %d, %q", code, errOut)
	}
	if _, _, code := run(t, "certgen", "--out", dir, "--overwrite"); code != 0 {
		t.Errorf("--overwrite: exit %d", code)
	}
}

func TestCertgenDefaultNames(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := run(t, "certgen", "--out", dir, "--overwrite"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "server.crt"))
	if err != nil {
		t.Fatal(err)
	}
	srv := parseCert(t, b)
	if len(srv.DNSNames) != 1 || srv.DNSNames[0] != "localhost" || len(srv.IPAddresses) != 1 || !srv.IPAddresses[0].IsLoopback() {
		t.Errorf("default names: DNS %v, IP %v", srv.DNSNames, srv.IPAddresses)
	}
}

func TestCertgenSecrets(t *testing.T) {
	out, errOut, code := run(t, "certgen", "--format", "secrets", "--namespace", "ingress", "--dns-name", "switchyard.ingress.svc")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	docs := strings.Split(out, "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("want 2 manifests, got %d:\n%s", len(docs), out)
	}
	var cas []string
	for i, want := range []string{"switchyard-xds-server", "switchyard-xds-client"} {
		var s corev1.Secret
		if err := yaml.UnmarshalStrict([]byte(docs[i]), &s); err != nil {
			t.Fatalf("manifest %d: %v", i, err)
		}
		if s.Name != want || s.Namespace != "ingress" || s.Type != corev1.SecretTypeTLS || s.Kind != "Secret" {
			t.Errorf("manifest %d: %s/%s type %s kind %s", i, s.Namespace, s.Name, s.Type, s.Kind)
		}
		for _, k := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey, "ca.crt"} {
			if s.StringData[k] == "" {
				t.Errorf("%s has no %s", s.Name, k)
			}
		}
		if strings.Contains(docs[i], "ca.key") {
			t.Errorf("%s carries the CA's key", s.Name)
		}
		cas = append(cas, s.StringData["ca.crt"])
	}
	if cas[0] != cas[1] {
		t.Error("the two Secrets carry different CAs")
	}
	if _, _, code := run(t, "certgen", "--format", "pkcs12"); code != 2 {
		t.Errorf("unknown format: exit %d", code)
	}
}

// TestCertgenDefaultDir: without --out the files go to the user's
// configuration directory, never the working directory, and certgen
// prints exactly where they went.
func TestCertgenDefaultDir(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv("HOME", t.TempDir())
	work := t.TempDir()
	t.Chdir(work)
	out, errOut, code := run(t, "certgen")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	dir := filepath.Join(config, "switchyard", "certs")
	for _, name := range []string{"ca.crt", "ca.key", "server.crt", "server.key", "client.crt", "client.key"} {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if !strings.Contains(out, path) {
			t.Errorf("the output does not say it wrote %s: %q", path, out)
		}
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Errorf("certgen wrote into the working directory: %v", entries)
	}

	out, _, code = run(t, "certgen", "--out", "rel", "-o", "json")
	if code != 0 {
		t.Fatalf("-o json: exit %d", code)
	}
	var written struct {
		Dir   string   `json:"dir"`
		Files []string `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &written); err != nil || written.Dir != filepath.Join(work, "rel") || len(written.Files) != 6 {
		t.Errorf("-o json: %v %+v", err, written)
	}
	if _, _, code := run(t, "certgen", "--out", t.TempDir(), "-o", "yaml"); code != 2 {
		t.Errorf("--format files -o yaml: exit %d, want 2", code)
	}
}

func TestCertgenSecretsJSON(t *testing.T) {
	out, errOut, code := run(t, "certgen", "--format", "secrets", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var list struct {
		Kind  string          `json:"kind"`
		Items []corev1.Secret `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || list.Kind != "List" || len(list.Items) != 2 || list.Items[1].Name != "switchyard-xds-client" {
		t.Errorf("-o json: %v, kind %q, %d items", err, list.Kind, len(list.Items))
	}
}
