package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/testenv"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// TestKubeCRDValidation: the API server itself rejects an HTTPProxy that
// breaks a CEL rule of the generated CRD, with the rule's message.
func TestKubeCRDValidation(t *testing.T) {
	env := kubeEnv.Get(t)
	k := newKubeObjects(t, env, env.Namespace(t))
	bad := &switchyardv1.HTTPProxy{
		ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: k.ns},
		Spec: switchyardv1.HTTPProxySpec{VirtualHost: &switchyardv1.VirtualHost{
			Fqdn: "bad.example.com",
			TLS:  &switchyardv1.TLS{Passthrough: true},
		}},
	}
	err := k.crd.Post().Namespace(k.ns).Resource("httpproxies").Body(bad).Do(context.Background()).Error()
	if err == nil || !strings.Contains(err.Error(), "virtualhost.tls.passthrough requires tcpproxy") {
		t.Fatalf("passthrough without tcpproxy: %v", err)
	}
	bad.Spec.VirtualHost = &switchyardv1.VirtualHost{Fqdn: "Not_A_Host"}
	err = k.crd.Post().Namespace(k.ns).Resource("httpproxies").Body(bad).Do(context.Background()).Error()
	if err == nil || !strings.Contains(err.Error(), "spec.virtualhost.fqdn") {
		t.Fatalf("bad fqdn: %v", err)
	}
}

// envoyResources returns what a replica serves Envoy, by type and name.
func envoyResources(r *replica) map[string]map[string]proto.Message {
	out := map[string]map[string]proto.Message{}
	for _, typ := range xdsres.TypesOf(xdsres.GroupEnvoy) {
		for _, res := range r.c.server.Cache().Resources(xdsres.GroupEnvoy, typ) {
			if out[typ] == nil {
				out[typ] = map[string]proto.Message{}
			}
			out[typ][res.Name] = res.Decoded()
		}
	}
	return out
}

// rendered builds, from scratch, what `switchyard render` makes of the
// objects the API server holds in ns: the reference the controller's
// incremental path must match.
func rendered(t *testing.T, k *kubeObjects) map[string]map[string]proto.Message {
	t.Helper()
	ctx := context.Background()
	snap := objects.NewSnapshot()
	var proxies switchyardv1.HTTPProxyList
	if err := k.crd.Get().Namespace(k.ns).Resource("httpproxies").Do(ctx).Into(&proxies); err != nil {
		t.Fatal(err)
	}
	for i := range proxies.Items {
		mustUpsert(t, snap, &proxies.Items[i])
	}
	svcs, err := k.env.Client.CoreV1().Services(k.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range svcs.Items {
		mustUpsert(t, snap, &svcs.Items[i])
	}
	epss, err := k.env.Client.DiscoveryV1().EndpointSlices(k.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range epss.Items {
		mustUpsert(t, snap, &epss.Items[i])
	}
	secrets, err := k.env.Client.CoreV1().Secrets(k.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range secrets.Items {
		mustUpsert(t, snap, &secrets.Items[i])
	}
	out, err := render.Run(snap, render.Options{Translator: translator.DefaultOptions(), Group: "envoy"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]proto.Message{}
	for typ, msgs := range out.Resources {
		byName[typ] = map[string]proto.Message{}
		for _, m := range msgs {
			byName[typ][xdsres.ResourceName(m)] = m
		}
	}
	return byName
}

func mustUpsert(t *testing.T, snap *objects.Snapshot, obj runtime.Object) {
	t.Helper()
	if _, err := snap.Upsert(obj); err != nil {
		t.Fatal(err)
	}
}

// diffResources describes how two resource sets differ, "" when equal.
func diffResources(got, want map[string]map[string]proto.Message) string {
	var out []string
	for _, typ := range xdsres.TypesOf(xdsres.GroupEnvoy) {
		for name, w := range want[typ] {
			g, ok := got[typ][name]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("missing %s %s", typ, name))
			case !proto.Equal(g, w):
				out = append(out, fmt.Sprintf("different %s %s", typ, name))
			}
		}
		for name := range got[typ] {
			if _, ok := want[typ][name]; !ok {
				out = append(out, fmt.Sprintf("extra %s %s", typ, name))
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// clusterFor returns the cluster of the first route of host that
// forwards to one (a TLS host's plain-HTTP route only redirects).
func clusterFor(res map[string]map[string]proto.Message, host string) string {
	for _, name := range keys(res[resource.RouteType]) {
		for _, vh := range res[resource.RouteType][name].(*envoy_config_route_v3.RouteConfiguration).GetVirtualHosts() {
			if !slices.Contains(vh.GetDomains(), host) {
				continue
			}
			for _, r := range vh.GetRoutes() {
				if c := r.GetRoute().GetCluster(); c != "" {
					return c
				}
			}
		}
	}
	return ""
}

// endpointsOf returns the sorted addresses of the load assignment of
// host's cluster.
func endpointsOf(res map[string]map[string]proto.Message, host string) []string {
	cla, _ := res[resource.EndpointType][clusterFor(res, host)].(*envoy_config_endpoint_v3.ClusterLoadAssignment)
	var out []string
	for _, l := range cla.GetEndpoints() {
		for _, e := range l.GetLbEndpoints() {
			a := e.GetEndpoint().GetAddress().GetSocketAddress()
			out = append(out, a.GetAddress()+":"+strconv.Itoa(int(a.GetPortValue())))
		}
	}
	sort.Strings(out)
	return out
}

// TestKubeServesAndReportsStatus: objects created in the API server are
// served to Envoy exactly as `render` translates them, and every
// HTTPProxy gets its status, valid or invalid with the reason.
func TestKubeServesAndReportsStatus(t *testing.T) {
	env, rc := controllerIdentity(t)
	k := newKubeObjects(t, env, env.Namespace(t))
	host := "app." + k.ns + ".example.com"
	k.service("web", "10.0.0.1", "10.0.0.2")
	k.tlsSecret("cert", host)
	k.tlsSecret("unused", "unused.example.com")
	k.proxy("app", host, "web", "cert")
	k.proxy("broken", "broken."+k.ns+".example.com", "missing", "")
	k.create("extensionservices", &switchyardv1alpha1.ExtensionService{
		ObjectMeta: metav1.ObjectMeta{Name: "authz", Namespace: k.ns},
		Spec:       switchyardv1alpha1.ExtensionServiceSpec{Services: []switchyardv1alpha1.ExtensionServiceTarget{{Name: "nowhere", Port: 9000}}},
	})
	k.create("tlscertificatedelegations", &switchyardv1.TLSCertificateDelegation{
		ObjectMeta: metav1.ObjectMeta{Name: "share", Namespace: k.ns},
		Spec: switchyardv1.TLSCertificateDelegationSpec{Delegations: []switchyardv1.CertificateDelegation{
			{SecretName: "cert", TargetNamespaces: []string{"*"}},
		}},
	})

	start := time.Now()
	r := startReplica(t, rc, testLease(k.ns, "serve-"+k.ns))
	t.Logf("replica serving %v after start", time.Since(start).Round(time.Millisecond))

	app := k.waitStatus("app", switchyardv1.StatusValid)
	broken := k.waitStatus("broken", switchyardv1.StatusInvalid)
	t.Logf("statuses written %v after start", time.Since(start).Round(time.Millisecond))
	if c := validCondition(app); c.Status != metav1.ConditionTrue || c.Reason != "Valid" {
		t.Errorf("app: %+v", c)
	}
	c := validCondition(broken)
	if c.Status != metav1.ConditionFalse || len(c.Errors) == 0 || !strings.Contains(c.Message, "missing") || !strings.Contains(broken.Status.Description, "missing") {
		t.Errorf("broken: description %q, condition %+v", broken.Status.Description, c)
	}
	t.Logf("broken: reason %s, %q", c.Reason, c.Message)

	// ExtensionServices and TLSCertificateDelegations get theirs too: an
	// ExtensionService a Programmed condition as well, Unknown while
	// nothing of it is served.
	ext := &switchyardv1alpha1.ExtensionService{}
	testenv.WaitFor(t, 10*time.Second, "the ExtensionService's status", func() bool {
		k.get("extensionservices", "authz", ext)
		return ext.Status.CurrentStatus != "" && len(ext.Status.Conditions) == 2
	})
	if pc := ext.Status.Conditions[1]; pc.Type != switchyardv1.ConditionProgrammed || pc.Status != metav1.ConditionUnknown || pc.Reason != "NotServed" {
		t.Errorf("ExtensionService Programmed condition: %+v", pc)
	}
	t.Logf("ExtensionService: %s, %q", ext.Status.CurrentStatus, ext.Status.Description)
	if ext.Status.CurrentStatus != switchyardv1.StatusInvalid || !strings.Contains(ext.Status.Description, "nowhere") {
		t.Errorf("ExtensionService status: %+v", ext.Status)
	}
	del := &switchyardv1.TLSCertificateDelegation{}
	testenv.WaitFor(t, 10*time.Second, "the TLSCertificateDelegation's status", func() bool {
		k.get("tlscertificatedelegations", "share", del)
		return len(del.Status.Conditions) == 1
	})
	if dc := del.Status.Conditions[0]; dc.Type != switchyardv1.ConditionValid || dc.Status != metav1.ConditionTrue || dc.ObservedGeneration != del.Generation {
		t.Errorf("TLSCertificateDelegation condition: %+v", dc)
	}

	var diff string
	testenv.WaitFor(t, 10*time.Second, "the served resources to match render", func() bool {
		diff = diffResources(envoyResources(r), rendered(t, k))
		return diff == ""
	})
	res := envoyResources(r)
	if got := endpointsOf(res, host); strings.Join(got, ",") != "10.0.0.1:8080,10.0.0.2:8080" {
		t.Errorf("endpoints of %s: %v", host, got)
	}
	if _, ok := res[resource.SecretType][k.ns+"/cert"]; !ok {
		t.Errorf("the certificate is not served: %v", keys(res[resource.SecretType]))
	}
	if _, ok := res[resource.SecretType][k.ns+"/unused"]; ok {
		t.Error("an unreferenced Secret is served")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestKubeEndpointScaleIsNotARebuild scales an EndpointSlice: the load
// assignment changes through the endpoint path, with no full build.
func TestKubeEndpointScaleIsNotARebuild(t *testing.T) {
	k, host, rc := appFixture(t, "scale", "10.0.1.1")
	env := k.env
	r := startReplica(t, rc, testLease(k.ns, "scale-"+k.ns))
	k.waitStatus("app", switchyardv1.StatusValid)
	testenv.WaitFor(t, 10*time.Second, "one endpoint", func() bool { return len(endpointsOf(envoyResources(r), host)) == 1 })

	full := r.metric(t, `switchyard_builds_total{kind="full",result="ok"}`)
	eps := r.metric(t, `switchyard_builds_total{kind="endpoints",result="ok"}`)
	es := slice(k.ns, "web", "10.0.1.1", "10.0.1.2", "10.0.1.3")
	start := time.Now()
	if _, err := env.Client.DiscoveryV1().EndpointSlices(k.ns).Update(context.Background(), es, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "three endpoints", func() bool { return len(endpointsOf(envoyResources(r), host)) == 3 })
	t.Logf("EndpointSlice update to the load assignment: %v", time.Since(start).Round(time.Millisecond))
	if after := r.metric(t, `switchyard_builds_total{kind="full",result="ok"}`); after != full {
		t.Errorf("full builds %s -> %s: an EndpointSlice change must not rebuild", full, after)
	}
	if after := r.metric(t, `switchyard_builds_total{kind="endpoints",result="ok"}`); after == eps {
		t.Errorf("endpoint builds still %s: the change did not take the endpoint path", eps)
	}
}
