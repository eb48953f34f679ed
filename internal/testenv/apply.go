package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"
)

// Apply applies every object of a multi-document YAML manifest with
// server-side apply, as `kubectl apply --server-side [--dry-run=server]`
// would; with dryRun the API server validates, defaults and admits each
// object but stores nothing. Namespaces are always created for real, since
// a dry run of a namespaced object needs its namespace to exist. It
// returns the objects as the API server answered, and the warnings it
// sent (deprecated APIs, Pod Security violations, ...).
func (e *Env) Apply(ctx context.Context, manifest []byte, dryRun bool) ([]*unstructured.Unstructured, []string, error) {
	cfg := rest.CopyConfig(e.Config)
	var warnings warningCollector
	cfg.WarningHandler = &warnings
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(e.Client.Discovery()))
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for i := 0; ; i++ {
		obj := &unstructured.Unstructured{}
		if err := d.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return out, warnings.list, nil
		} else if err != nil {
			return out, warnings.list, fmt.Errorf("document %d: %w", i, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return out, warnings.list, fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if obj.GetNamespace() != "" {
			ri = dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
		}
		opts := metav1.PatchOptions{FieldManager: "switchyard-tests", Force: ptr.To(true)}
		if dryRun && gvk.Kind != "Namespace" {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		body, err := obj.MarshalJSON()
		if err != nil {
			return out, warnings.list, err
		}
		got, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, opts)
		if err != nil {
			return out, warnings.list, fmt.Errorf("%s %s/%s: %w", gvk.Kind, obj.GetNamespace(), obj.GetName(), err)
		}
		out = append(out, got)
	}
}

// warningCollector keeps the API server's warnings.
type warningCollector struct {
	mu   sync.Mutex
	list []string
}

func (w *warningCollector) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}
