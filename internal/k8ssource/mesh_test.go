package k8ssource_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	accessv1alpha3 "github.com/switchyard-dev/switchyard/apis/smi/access/v1alpha3"
	specsv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/specs/v1alpha4"
	splitv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/split/v1alpha4"
	"github.com/switchyard-dev/switchyard/internal/k8ssource"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// createSMI posts an SMI object through the source's own typed client.
func createSMI(t *testing.T, gv schema.GroupVersion, resource, ns string, obj runtime.Object) {
	t.Helper()
	c, err := k8ssource.RESTClient(env.Config, gv)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Post().Namespace(ns).Resource(resource).Body(obj).Do(context.Background()).Error(); err != nil {
		t.Fatalf("creating %s: %v", resource, err)
	}
}

// TestMeshKinds reads TrafficSplits, HTTPRouteGroups, TrafficTargets,
// Pods and Namespaces from the real API server when the source runs for
// the mesh, Namespaces and Pods trimmed to what the mesh reads, and picks
// up a split's edit.
func TestMeshKinds(t *testing.T) {
	ns := env.Namespace(t)
	ctx := context.Background()
	n, err := env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Annotations = map[string]string{"switchyard.dev/mesh": "true"}
	if _, err := env.Client.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	split := &splitv1alpha4.TrafficSplit{
		ObjectMeta: metav1.ObjectMeta{Name: "reviews", Namespace: ns},
		Spec: splitv1alpha4.TrafficSplitSpec{
			Service:  "reviews",
			Backends: []splitv1alpha4.TrafficSplitBackend{{Service: "v1", Weight: 70}, {Service: "v2", Weight: 30}},
			Matches:  []splitv1alpha4.MatchReference{{Kind: "HTTPRouteGroup", Name: "canary"}},
		},
	}
	createSMI(t, splitv1alpha4.SchemeGroupVersion, "trafficsplits", ns, split)
	createSMI(t, specsv1alpha4.SchemeGroupVersion, "httproutegroups", ns, &specsv1alpha4.HTTPRouteGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "canary", Namespace: ns},
		Spec: specsv1alpha4.HTTPRouteGroupSpec{Matches: []specsv1alpha4.HTTPMatch{
			{Name: "get", PathRegex: "/Get", Headers: map[string]string{"x-canary": "1"}},
		}},
	})

	createSMI(t, accessv1alpha3.SchemeGroupVersion, "traffictargets", ns, &accessv1alpha3.TrafficTarget{
		ObjectMeta: metav1.ObjectMeta{Name: "reviews", Namespace: ns},
		Spec: accessv1alpha3.TrafficTargetSpec{
			Destination: accessv1alpha3.IdentityBindingSubject{Kind: "ServiceAccount", Name: "reviews"},
			Sources:     []accessv1alpha3.IdentityBindingSubject{{Kind: "ServiceAccount", Name: "productpage"}},
		},
	})
	pod, err := env.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "productpage-1", Namespace: ns, Labels: map[string]string{"app": "productpage"}},
		Spec: corev1.PodSpec{
			ServiceAccountName: "productpage",
			Containers:         []corev1.Container{{Name: "app", Image: "app", Env: []corev1.EnvVar{{Name: "BIG", Value: "never read"}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.PodIP, pod.Status.PodIPs = "10.3.0.1", []corev1.PodIP{{IP: "10.3.0.1"}}
	if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	r := startSourceWith(t, k8ssource.Config{Namespaces: []string{ns}, Mesh: true})
	got := r.initial
	ts, _ := got[objects.Key{Kind: objects.KindTrafficSplit, Namespace: ns, Name: "reviews"}].(*splitv1alpha4.TrafficSplit)
	if ts == nil || ts.Spec.Service != "reviews" || len(ts.Spec.Backends) != 2 || ts.Spec.Backends[0].Weight != 70 || len(ts.Spec.Matches) != 1 {
		t.Fatalf("TrafficSplit read as %+v", ts)
	}
	rg, _ := got[objects.Key{Kind: objects.KindHTTPRouteGroup, Namespace: ns, Name: "canary"}].(*specsv1alpha4.HTTPRouteGroup)
	if rg == nil || len(rg.Spec.Matches) != 1 || rg.Spec.Matches[0].Headers["x-canary"] != "1" {
		t.Fatalf("HTTPRouteGroup read as %+v", rg)
	}
	tt, _ := got[objects.Key{Kind: objects.KindTrafficTarget, Namespace: ns, Name: "reviews"}].(*accessv1alpha3.TrafficTarget)
	if tt == nil || tt.Spec.Destination.Name != "reviews" || len(tt.Spec.Sources) != 1 {
		t.Fatalf("TrafficTarget read as %+v", tt)
	}
	p, _ := got[objects.Key{Kind: objects.KindPod, Namespace: ns, Name: "productpage-1"}].(*corev1.Pod)
	if p == nil || p.Spec.ServiceAccountName != "productpage" || len(p.Status.PodIPs) != 1 || p.Status.PodIPs[0].IP != "10.3.0.1" || p.Labels["app"] != "productpage" {
		t.Fatalf("Pod read as %+v", p)
	}
	if len(p.Spec.Containers) != 0 || p.Status.PodIP != "" {
		t.Errorf("the Pod keeps what no build reads: %d containers, podIP %q", len(p.Spec.Containers), p.Status.PodIP)
	}
	nsObj, _ := got[objects.Key{Kind: objects.KindNamespace, Name: ns}].(*corev1.Namespace)
	if nsObj == nil || nsObj.Annotations["switchyard.dev/mesh"] != "true" {
		t.Fatalf("Namespace read as %+v", nsObj)
	}
	if len(nsObj.Spec.Finalizers) != 0 || nsObj.Status.Phase != "" || len(nsObj.ManagedFields) != 0 {
		t.Errorf("the Namespace keeps what no build reads: spec %+v, status %+v, %d managed fields", nsObj.Spec, nsObj.Status, len(nsObj.ManagedFields))
	}

	c, err := k8ssource.RESTClient(env.Config, splitv1alpha4.SchemeGroupVersion)
	if err != nil {
		t.Fatal(err)
	}
	var cur splitv1alpha4.TrafficSplit
	if err := c.Get().Namespace(ns).Resource("trafficsplits").Name("reviews").Do(ctx).Into(&cur); err != nil {
		t.Fatal(err)
	}
	cur.Spec.Backends[0].Weight = 10
	if err := c.Put().Namespace(ns).Resource("trafficsplits").Name("reviews").Body(&cur).Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	r.waitChange(t, objects.Key{Kind: objects.KindTrafficSplit, Namespace: ns, Name: "reviews"}, "the split's edit", func(c objects.Change) bool {
		o, _ := c.Object.(*splitv1alpha4.TrafficSplit)
		return o != nil && o.Spec.Backends[0].Weight == 10
	})
}

// createPod creates a Pod running as a ServiceAccount, with an IP.
func createPod(t *testing.T, ns, name, serviceAccount, ip string) {
	t.Helper()
	ctx := context.Background()
	pod, err := env.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.PodSpec{ServiceAccountName: serviceAccount, Containers: []corev1.Container{{Name: "app", Image: "app"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	if _, err := env.Client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// annotateNamespace sets or (with "") removes the mesh annotation.
func annotateNamespace(t *testing.T, ns, value string) {
	t.Helper()
	ctx := context.Background()
	n, err := env.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Annotations = map[string]string{}
	if value != "" {
		n.Annotations["switchyard.dev/mesh"] = value
	}
	if _, err := env.Client.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestMeshPodsOnlyInMeshNamespaces: the source passes on the Pods of
// the namespaces in the mesh (annotated, or with an annotated Service)
// and no others; a namespace that joins has its Pods passed on without a
// restart, and one that leaves has them removed.
func TestMeshPodsOnlyInMeshNamespaces(t *testing.T) {
	outside, annotated, withService := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	annotateNamespace(t, annotated, "true")
	_, err := env.Client.CoreV1().Services(withService).Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "reviews", Namespace: withService, Annotations: map[string]string{"switchyard.dev/mesh": "true"}},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{outside, annotated, withService} {
		createPod(t, ns, "p", "app", "10.3.0.1")
	}
	r := startSourceWith(t, k8ssource.Config{Namespaces: []string{outside, annotated, withService}, Mesh: true})
	podKey := func(ns string) objects.Key { return objects.Key{Kind: objects.KindPod, Namespace: ns, Name: "p"} }
	for ns, want := range map[string]bool{outside: false, annotated: true, withService: true} {
		if _, got := r.initial[podKey(ns)]; got != want {
			t.Errorf("Pod of namespace %s in the initial objects: %v, want %v", ns, got, want)
		}
	}

	annotateNamespace(t, outside, "true")
	r.waitChange(t, podKey(outside), "the Pod of a namespace that joined the mesh", func(c objects.Change) bool {
		p, _ := c.Object.(*corev1.Pod)
		return p != nil && p.Spec.ServiceAccountName == "app" && len(p.Status.PodIPs) == 1
	})
	annotateNamespace(t, outside, "")
	r.waitChange(t, podKey(outside), "the Pod's removal once its namespace left the mesh", func(c objects.Change) bool {
		return c.Object == nil
	})
}
