package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
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
client.crt and client.key into --out. --format secrets prints Kubernetes
Secret manifests instead: switchyard-xds-server and switchyard-xds-client
(type kubernetes.io/tls, each with the CA as ca.crt). The CA's key is never
put in a Secret; keep it (files format) only to issue more certificates.`,
		Example: `  # Certificates for serve on this machine:
  switchyard certgen --out certs
  switchyard serve --xds-tls-cert certs/server.crt --xds-tls-key certs/server.key --xds-tls-ca certs/ca.crt

  # Secrets for a cluster, the server reached as switchyard.switchyard.svc:
  switchyard certgen --format secrets --dns-name switchyard.switchyard.svc | kubectl apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCertgen(cmd.OutOrStdout(), o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "certs", "directory the files are written to (--format files)")
	f.StringVar(&o.format, "format", "files", "files, or secrets (Kubernetes Secret manifests on standard output)")
	f.StringSliceVar(&o.dnsNames, "dns-name", []string{"localhost"}, "DNS name of the xDS server, a subject alternative name of its certificate (repeatable)")
	f.IPSliceVar(&o.ips, "ip-address", []net.IP{net.ParseIP("127.0.0.1")}, "IP address of the xDS server, a subject alternative name of its certificate (repeatable)")
	f.StringVar(&o.clientName, "client-name", "switchyard-xds-client", "common name of the client certificate")
	f.StringSliceVar(&o.clientGroups, "client-groups", nil, "consumer groups (envoy, grpc, dns) the client certificate may join; default all. Only envoy nodes receive TLS private keys: give DNS balancers and gRPC clients certificates without it")
	f.StringVar(&o.namespace, "namespace", "switchyard", "namespace of the Secrets (--format secrets)")
	f.DurationVar(&o.validity, "validity", 365*24*time.Hour, "how long the certificates are valid")
	f.BoolVar(&o.overwrite, "overwrite", false, "replace files already in --out")
	return cmd
}

func runCertgen(stdout io.Writer, o certgenOptions) error {
	if o.format != "files" && o.format != "secrets" {
		return usageError("--format %q: use files or secrets", o.format)
	}
	p, err := xdstls.NewPKI(xdstls.PKIOptions{DNSNames: o.dnsNames, IPs: o.ips, ClientName: o.clientName, ClientGroups: o.clientGroups, Validity: o.validity})
	if err != nil {
		return usageError("%v", err)
	}
	if o.format == "secrets" {
		return writeSecrets(stdout, p, o.namespace)
	}
	return writePKIFiles(stdout, p, o)
}

// writePKIFiles writes the PEM files, refusing to replace existing ones
// unless told to: overwriting a CA by mistake locks every client out.
func writePKIFiles(stdout io.Writer, p *xdstls.PKI, o certgenOptions) error {
	files := []struct {
		name string
		data []byte
	}{
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
	fmt.Fprintf(stdout, "wrote ca.crt, ca.key, server.crt, server.key, client.crt and client.key to %s\n", o.out)
	return nil
}

// writeSecrets prints the server's and the clients' Secrets.
func writeSecrets(w io.Writer, p *xdstls.PKI, namespace string) error {
	for i, s := range []struct {
		name      string
		cert, key []byte
	}{
		{"switchyard-xds-server", p.ServerCert, p.ServerKey},
		{"switchyard-xds-client", p.ClientCert, p.ClientKey},
	} {
		secret := corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "switchyard"}},
			Type:       corev1.SecretTypeTLS,
			StringData: map[string]string{corev1.TLSCertKey: string(s.cert), corev1.TLSPrivateKeyKey: string(s.key), "ca.crt": string(p.CACert)},
		}
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
