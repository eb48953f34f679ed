package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/switchyard-dev/switchyard/internal/xdstls"
)

func init() { moreCommands = append(moreCommands, newCertgenCommand) }

// certgenOptions are certgen's flags.
type certgenOptions struct {
	out          string
	format       string
	output       string
	dnsNames     []string
	ips          []net.IP
	clientName   string
	clientGroups []string
	namespace    string
	validity     time.Duration
	overwrite    bool
}

func newCertgenCommand() *cobra.Command {
	o := certgenOptions{}
	cmd := &cobra.Command{
		Use:   "certgen",
		Short: "Write a CA and the xDS server and client certificates it signs",
		Long: `certgen issues a fresh CA (ECDSA P-256) and, signed by it, a certificate for
the xDS server (with the DNS names and IP addresses clients dial it by) and
one for its clients (Envoy, gRPC clients, the DNS plugin). Give them to
'switchyard serve --xds-tls-cert --xds-tls-key --xds-tls-ca' and to the
clients ('switchyard bootstrap' takes the same three flags).

--format files (the default) writes ca.crt, ca.key, server.crt, server.key,
client.crt and client.key into --out, by default switchyard/certs in the
user's configuration directory ($XDG_CONFIG_HOME, else ~/.config), never
the current directory: keys do not belong in a working tree. It prints the
absolute paths it wrote. --format secrets prints Kubernetes
Secret manifests instead: switchyard-xds-server and switchyard-xds-client
(type kubernetes.io/tls, each with the CA as ca.crt). The CA's key is never
put in a Secret; keep it (files format) only to issue more certificates.`,
		Example: `  # Certificates for serve on this machine, in a directory of your choice:
  switchyard certgen --out /etc/switchyard/certs
  switchyard serve --xds-tls-cert /etc/switchyard/certs/server.crt \
    --xds-tls-key /etc/switchyard/certs/server.key --xds-tls-ca /etc/switchyard/certs/ca.crt

  # Secrets for a cluster, the server reached as switchyard.switchyard.svc:
  switchyard certgen --format secrets --dns-name switchyard.switchyard.svc | kubectl apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCertgen(cmd.OutOrStdout(), o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "directory the files are written to (--format files; default: switchyard/certs in the user's configuration directory)")
	f.StringVar(&o.format, "format", "files", "files, or secrets (Kubernetes Secret manifests on standard output)")
	f.StringVarP(&o.output, "output", "o", "", "what is printed: yaml or json Secret manifests (--format secrets, default yaml); text or json, the files written (--format files, default text)")
	f.StringSliceVar(&o.dnsNames, "dns-name", []string{"localhost"}, "DNS name of the xDS server, a subject alternative name of its certificate (repeatable)")
	f.IPSliceVar(&o.ips, "ip-address", []net.IP{net.ParseIP("127.0.0.1")}, "IP address of the xDS server, a subject alternative name of its certificate (repeatable)")
	f.StringVar(&o.clientName, "client-name", "switchyard-xds-client", "common name of the client certificate")
	f.StringSliceVar(&o.clientGroups, "client-groups", nil, "consumer groups (envoy, grpc, dns, mesh) the client certificate may join; default all. Only envoy nodes receive TLS private keys: give DNS balancers and gRPC clients certificates without it")
	f.StringVar(&o.namespace, "namespace", "switchyard", "namespace of the Secrets (--format secrets)")
	f.DurationVar(&o.validity, "validity", 365*24*time.Hour, "how long the certificates are valid")
	f.BoolVar(&o.overwrite, "overwrite", false, "replace files already in --out")
	return cmd
}

func runCertgen(stdout io.Writer, o certgenOptions) error {
	switch {
	case o.format != "files" && o.format != "secrets":
		return usageError("--format %q: use files or secrets", o.format)
	case o.format == "secrets" && o.output != "" && o.output != "yaml" && o.output != "json":
		return usageError("-o %q: --format secrets prints yaml or json", o.output)
	case o.format == "files" && o.output != "" && o.output != "text" && o.output != "json":
		return usageError("-o %q: --format files prints text or json", o.output)
	}
	if o.format == "files" && o.out == "" {
		dir, err := defaultCertDir()
		if err != nil {
			return usageError("%v: give --out DIR", err)
		}
		o.out = dir
	}
	p, err := xdstls.NewPKI(xdstls.PKIOptions{DNSNames: o.dnsNames, IPs: o.ips, ClientName: o.clientName, ClientGroups: o.clientGroups, Validity: o.validity})
	if err != nil {
		return usageError("%v", err)
	}
	if o.format == "secrets" {
		return writeSecrets(stdout, p, o.namespace, o.output == "json")
	}
	return writePKIFiles(stdout, p, o)
}

// writePKIFiles writes the PEM files, refusing to replace existing ones
// unless told to: overwriting a CA by mistake locks every client out.
func writePKIFiles(stdout io.Writer, p *xdstls.PKI, o certgenOptions) error {
	files := []pemFile{
		{"ca.crt", p.CACert}, {"ca.key", p.CAKey},
		{"server.crt", p.ServerCert}, {"server.key", p.ServerKey},
		{"client.crt", p.ClientCert}, {"client.key", p.ClientKey},
	}
	if !o.overwrite {
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(o.out, f.name)); !errors.Is(err, fs.ErrNotExist) {
				return usageError("%s already exists: give --overwrite to replace it, or another --out", filepath.Join(o.out, f.name))
			}
		}
	}
	if err := os.MkdirAll(o.out, 0o700); err != nil {
		return &exitError{code: 1, err: err}
	}
	for _, f := range files {
		// Keys are private: owner-only, certificates world-readable.
		mode := os.FileMode(0o644)
		if filepath.Ext(f.name) == ".key" {
			mode = 0o600
		}
		if err := os.WriteFile(filepath.Join(o.out, f.name), f.data, mode); err != nil {
			return &exitError{code: 1, err: err}
		}
	}
	return printWritten(stdout, o, files)
}

// defaultCertDir is where certgen writes without --out: the user's
// configuration directory, not the working tree, where keys would be one
// `git add .` away from a repository.
func defaultCertDir() (string, error) {
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no default directory for the certificates (%w)", err)
	}
	return filepath.Join(base, "switchyard", "certs"), nil
}

// pemFile is one file certgen writes.
type pemFile struct {
	name string
	data []byte
}

// printWritten says exactly where each file went, as absolute paths.
func printWritten(stdout io.Writer, o certgenOptions, files []pemFile) error {
	dir, err := filepath.Abs(o.out)
	if err != nil {
		dir = o.out
	}
	paths := make([]string, 0, len(files))
	for _, f := range files {
		paths = append(paths, filepath.Join(dir, f.name))
	}
	if o.output == "json" {
		b, err := json.MarshalIndent(map[string]any{"dir": dir, "files": paths}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s\n", strings.Join(paths, ", "))
	return err
}

// writeSecrets prints the server's and the clients' Secrets: YAML
// documents, or with asJSON one v1 List, which kubectl applies alike.
func writeSecrets(w io.Writer, p *xdstls.PKI, namespace string, asJSON bool) error {
	var secrets []corev1.Secret
	for _, s := range []struct {
		name      string
		cert, key []byte
	}{
		{"switchyard-xds-server", p.ServerCert, p.ServerKey},
		{"switchyard-xds-client", p.ClientCert, p.ClientKey},
	} {
		secrets = append(secrets, corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "switchyard"}},
			Type:       corev1.SecretTypeTLS,
			StringData: map[string]string{corev1.TLSCertKey: string(s.cert), corev1.TLSPrivateKeyKey: string(s.key), "ca.crt": string(p.CACert)},
		})
	}
	if asJSON {
		b, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": secrets}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	for i, secret := range secrets {
		b, err := yaml.Marshal(secret)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w, "---")
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
