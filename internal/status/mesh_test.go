package status_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	accessv1alpha3 "github.com/switchyard-dev/switchyard/apis/smi/access/v1alpha3"
	splitv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/split/v1alpha4"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/k8ssource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/testenv"
)

// TestTrafficSplitStatus runs a bad split and a bad target through what
// serve --mesh does with them: read by the Kubernetes source, judged by
// the build, written by the writer to the status subresource that
// Switchyard's CRDs add to SMI's schema. The write leaves the generation
// alone, so the source sees no new spec and no build follows it.
func TestTrafficSplitStatus(t *testing.T) {
	ns := env.Namespace(t)
	ctx := context.Background()
	if _, err := env.Client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "reviews", Namespace: ns, Annotations: map[string]string{dag.MeshAnnotation: "true"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc, err := k8ssource.RESTClient(env.Config, splitv1alpha4.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	split := &splitv1alpha4.TrafficSplit{
		ObjectMeta: metav1.ObjectMeta{Name: "reviews", Namespace: ns},
		Spec: splitv1alpha4.TrafficSplitSpec{
			Service:  "reviews",
			Backends: []splitv1alpha4.TrafficSplitBackend{{Service: "reviews-v1", Weight: 70}, {Service: "reviews", Weight: 30}},
		},
	}
	if err := sc.Post().Namespace(ns).Resource("trafficsplits").Body(split).Do(ctx).Into(split); err != nil {
		t.Fatal(err)
	}

	ac, err := k8ssource.RESTClient(env.Config, accessv1alpha3.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	target := &accessv1alpha3.TrafficTarget{
		ObjectMeta: metav1.ObjectMeta{Name: "reviews", Namespace: ns},
		Spec:       accessv1alpha3.TrafficTargetSpec{Destination: accessv1alpha3.IdentityBindingSubject{Kind: "Group", Name: "reviews"}},
	}
	if err := ac.Post().Namespace(ns).Resource("traffictargets").Body(target).Do(ctx).Into(target); err != nil {
		t.Fatal(err)
	}

	src, err := k8ssource.New(k8ssource.Config{REST: env.Config, Namespaces: []string{ns}, Mesh: true, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	initial, err := src.Start(runCtx)
	if err != nil {
		t.Fatal(err)
	}
	snap := objects.NewSnapshot()
	for _, c := range initial {
		if _, err := snap.Upsert(c.Object); err != nil {
			t.Fatal(err)
		}
	}
	w, _ := startWriter(t, src.Get, time.Now)
	w.Update(dag.Build(snap, dag.Options{Mesh: true}).Statuses)

	var got splitv1alpha4.TrafficSplit
	testenv.WaitFor(t, 10*time.Second, "the split's status", func() bool {
		if err := sc.Get().Namespace(ns).Resource("trafficsplits").Name("reviews").Do(ctx).Into(&got); err != nil {
			t.Fatal(err)
		}
		return got.Status.CurrentStatus != ""
	})
	st := got.Status
	if st.CurrentStatus != "invalid" || len(st.Conditions) != 1 {
		t.Fatalf("status %+v, want invalid with one condition", st)
	}
	c := st.Conditions[0]
	if c.Type != "Valid" || c.Status != metav1.ConditionFalse || c.Reason != "ServiceNotFound" || c.ObservedGeneration != split.Generation ||
		len(c.Errors) != 1 || c.Errors[0].Message != "spec.backends[0].service: Service "+ns+"/reviews-v1 not found" {
		t.Fatalf("condition %+v, want Valid False ServiceNotFound naming spec.backends[0].service", c)
	}
	if got.Generation != split.Generation {
		t.Fatalf("the status write moved the generation from %d to %d", split.Generation, got.Generation)
	}

	var tt accessv1alpha3.TrafficTarget
	testenv.WaitFor(t, 10*time.Second, "the target's status", func() bool {
		if err := ac.Get().Namespace(ns).Resource("traffictargets").Name("reviews").Do(ctx).Into(&tt); err != nil {
			t.Fatal(err)
		}
		return tt.Status.CurrentStatus != ""
	})
	if c := tt.Status.Conditions; tt.Status.CurrentStatus != "invalid" || len(c) != 1 || c[0].Reason != "UnsupportedKind" || len(c[0].Errors) != 1 ||
		!strings.HasPrefix(c[0].Errors[0].Message, "spec.destination.kind: ") {
		t.Fatalf("target status %+v, want invalid, UnsupportedKind naming spec.destination.kind", tt.Status)
	}
}
