package dirsource_test

import (
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// TestDecodeNamesTheSource reads a value as a directory file would be
// read: good documents load, a bad one is a Problem under the given name.
func TestDecodeNamesTheSource(t *testing.T) {
	data := `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}
---
apiVersion: v1
kind: Service
metadata: {name: bad, namespace: shop}
spec: {portz: []}
`
	objs, ps := dirsource.Decode("/switchyard/service/default/web", []byte(data))
	if len(objs) != 1 || objs[0].Key != (objects.Key{Kind: objects.KindService, Namespace: "default", Name: "web"}) || objs[0].Line != 1 {
		t.Errorf("objects = %+v, want Service default/web from line 1", objs)
	}
	if len(ps) != 1 || ps[0].File != "/switchyard/service/default/web" || ps[0].Line != 3 || !strings.Contains(ps[0].Message, "portz") {
		t.Errorf("problems = %v, want one naming the key, line 3 and the field portz", ps)
	}
}
