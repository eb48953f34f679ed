package etcdsource_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-dev/switchyard/internal/etcdsource"
	"github.com/switchyard-dev/switchyard/internal/etcdsource/etcdtest"
	"github.com/switchyard-dev/switchyard/internal/xdstls"
)

// writeFiles writes name -> content into dir and returns the paths.
func writeFiles(t *testing.T, dir string, files map[string][]byte) map[string]string {
	t.Helper()
	paths := map[string]string{}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths
}

// TestTLSAndPassword reads from an etcd that serves TLS, requires client
// certificates and has auth enabled, as a user allowed only the prefix:
// the right password loads, a wrong one fails at once (retrying cannot
// fix it) instead of waiting forever.
func TestTLSAndPassword(t *testing.T) {
	pki, err := xdstls.NewPKI(xdstls.PKIOptions{IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, ClientName: "root", Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	f := writeFiles(t, t.TempDir(), map[string][]byte{
		"ca.pem": pki.CACert, "server.pem": pki.ServerCert, "server-key.pem": pki.ServerKey,
		"client.pem": pki.ClientCert, "client-key.pem": pki.ClientKey,
		"password": []byte("s3cret\n"), "wrong": []byte("guess\n"),
	})
	e := etcdtest.StartTLS(t, etcdtest.TLSFiles{CA: f["ca.pem"], ServerCert: f["server.pem"], ServerKey: f["server-key.pem"], ClientCert: f["client.pem"], ClientKey: f["client-key.pem"]})
	admin := e.Client(t)
	ctx := context.Background()
	put(t, admin, serviceKey("shop", "web"), serviceJSON("shop", "web", 80))
	for _, step := range []func() error{
		func() error { _, err := admin.UserAdd(ctx, "root", "root-pw"); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := admin.RoleAdd(ctx, "switchyard"); return err },
		func() error {
			_, err := admin.RoleGrantPermission(ctx, "switchyard", prefix, clientv3.GetPrefixRangeEnd(prefix), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := admin.UserAdd(ctx, "switchyard", "s3cret"); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "switchyard", "switchyard"); return err },
		func() error { _, err := admin.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}

	opts := etcdsource.ClientOptions{Endpoints: []string{e.Endpoint}, CA: f["ca.pem"], Cert: f["client.pem"], Key: f["client-key.pem"], Username: "switchyard", PasswordFile: f["password"]}
	c, err := etcdsource.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	initial, err := etcdsource.New(etcdsource.Config{Client: c, Prefix: prefix}).Start(ctx)
	if err != nil || len(initial) != 1 {
		t.Fatalf("Start as switchyard: %d objects, %v; want Service shop/web", len(initial), err)
	}

	opts.PasswordFile = f["wrong"]
	if c, err = etcdsource.NewClient(opts); err == nil {
		defer c.Close()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, err = etcdsource.New(etcdsource.Config{Client: c, Prefix: prefix}).Start(sctx)
	}
	if err == nil || !strings.Contains(err.Error(), "authentication failed") {
		t.Errorf("with a wrong password: %v, want an authentication failure at once", err)
	}
}
