package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-dev/switchyard/internal/etcdsource/etcdtest"
	"github.com/switchyard-dev/switchyard/internal/testenv"
)

// etcdStatus reads the currentStatus Switchyard wrote for an HTTPProxy.
func etcdStatus(t *testing.T, e *etcdtest.Server, ns, name string) string {
	t.Helper()
	resp, err := e.Client(t).Get(context.Background(), "/switchyard/status/httpproxy/"+ns+"/"+name)
	if err != nil || len(resp.Kvs) == 0 {
		return ""
	}
	var v struct {
		CurrentStatus string `json:"currentStatus"`
	}
	_ = json.Unmarshal(resp.Kvs[0].Value, &v)
	return v.CurrentStatus
}

// TestEtcdQuickstart follows examples/etcd/README.md: load the quickstart
// into etcd, serve it, change it, remove it.
func TestEtcdQuickstart(t *testing.T) {
	e := etcdtest.Start(t)
	ep := "--etcd-endpoints=" + e.Endpoint
	out, errOut, code := run(t, "etcd", "apply", ep, "-f", "../../examples/quickstart")
	if code != 0 || strings.Count(out, "objects written at revision") != 3 {
		t.Fatalf("etcd apply: exit %d\n%s%s", code, out, errOut)
	}

	// A file with one bad document is refused whole.
	bad := filepath.Join(t.TempDir(), "team.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: Service\nmetadata: {name: fine, namespace: team}\nspec: {ports: [{port: 80}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: typo, namespace: team}\nspec: {portz: []}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, "etcd", "apply", ep, "-f", bad); code != 1 || !strings.Contains(errOut, "not applied") || !strings.Contains(errOut, "portz") {
		t.Errorf("applying a file with a bad document: exit %d, %q; want 1 naming the problem", code, errOut)
	}
	if resp, err := e.Client(t).Get(context.Background(), "/switchyard/service/team/fine"); err != nil || len(resp.Kvs) != 0 {
		t.Errorf("the good document of a refused file was written (%v)", err)
	}

	admin := "127.0.0.1:" + freePort(t)
	serveUntilCleanup(t, "serve", ep, "--xds-address", "127.0.0.1:0", "--admin-address", admin, "--etcd-lease-ttl", "2", "--log-level", "warn")
	testenv.WaitFor(t, 30*time.Second, "/readyz", func() bool {
		return strings.HasPrefix(httpGet(t, "http://"+admin+"/readyz"), "ok\netcd: connected")
	})
	if out := httpGet(t, "http://"+admin+"/debug/xds?group=envoy"); !strings.Contains(out, "shop.example.com") {
		t.Fatalf("/debug/xds does not serve shop.example.com:\n%.2000s", out)
	}
	testenv.WaitFor(t, 10*time.Second, "status of infra/shop", func() bool { return etcdStatus(t, e, "infra", "shop") == "valid" })

	before := httpGet(t, "http://"+admin+"/debug/xds?group=envoy")
	if out, errOut, code := run(t, "etcd", "apply", ep, "-f", "../../examples/etcd/canary.yaml"); code != 0 || !strings.Contains(out, "1 objects written") {
		t.Fatalf("etcd apply canary.yaml: exit %d\n%s%s", code, out, errOut)
	}
	testenv.WaitFor(t, 10*time.Second, "the canary's new weights to be served", func() bool {
		now := httpGet(t, "http://"+admin+"/debug/xds?group=envoy")
		return now != "" && now != before
	})
	if out, errOut, code := run(t, "etcd", "delete", ep, "httpproxy", "shop/storefront"); code != 0 || !strings.Contains(out, "/switchyard/httpproxy/shop/storefront deleted") {
		t.Fatalf("etcd delete: exit %d\n%s%s", code, out, errOut)
	}
	testenv.WaitFor(t, 10*time.Second, "infra/shop to be invalid without its include", func() bool { return etcdStatus(t, e, "infra", "shop") == "invalid" })

	if out, errOut, code := run(t, "etcd", "delete", ep, "-f", "../../examples/quickstart"); code != 0 {
		t.Fatalf("etcd delete -f: exit %d\n%s%s", code, out, errOut)
	}
	resp, err := e.Client(t).Get(context.Background(), "/switchyard/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		if k := string(kv.Key); !strings.HasPrefix(k, "/switchyard/leader/") {
			t.Errorf("%s left after deleting the quickstart", k)
		}
	}
}

// TestEtcdFlagsNeedEndpoints refuses etcd flags that would be ignored, and
// a second source.
func TestEtcdFlagsNeedEndpoints(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--etcd-prefix", "/x/"},
		{"serve", "--etcd-endpoints", "http://127.0.0.1:1", "--source", "."},
	} {
		if _, errOut, code := run(t, args...); code != 2 || !strings.Contains(errOut, "etcd-") {
			t.Errorf("%v: exit %d %q, want a usage error about the etcd flags", args, code, errOut)
		}
	}
}
