package etcdsource_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/etcdsource"
	"github.com/switchyard-dev/switchyard/internal/etcdsource/etcdtest"
)

// TestApplyWritesWhatTheFileSays requires etcd apply to write every field
// of a manifest, also those no build reads and a source drops as it keeps
// objects (a selector, an endpoint's targetRef and hostname, owner
// references): other readers of etcd may need them.
func TestApplyWritesWhatTheFileSays(t *testing.T) {
	const manifest = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-a
  namespace: shop
  labels: {kubernetes.io/service-name: web}
  ownerReferences: [{apiVersion: v1, kind: Service, name: web, uid: "1234"}]
addressType: IPv4
endpoints:
- addresses: [10.0.0.1]
  hostname: web-0
  targetRef: {kind: Pod, name: web-0, namespace: shop}
`
	file := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	c := etcdtest.Start(t).Client(t)
	ctx := context.Background()
	if _, err := etcdsource.ApplyFile(ctx, c, prefix, file); err != nil {
		t.Fatal(err)
	}
	for key, fields := range map[string][]string{
		serviceKey("shop", "web"):           {`"selector":{"app":"web"}`},
		prefix + "endpointslice/shop/web-a": {`"hostname":"web-0"`, `"targetRef":`, `"ownerReferences":`, `"uid":"1234"`},
	} {
		resp, err := c.Get(ctx, key)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("get %s: %v, %d values", key, err, len(resp.Kvs))
		}
		for _, f := range fields {
			if v := string(resp.Kvs[0].Value); !strings.Contains(v, f) {
				t.Errorf("%s: %s is missing from %s", key, f, v)
			}
		}
	}
}
