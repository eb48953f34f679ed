package dag

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// TestDefaultGlobalRateLimitPolicy: the default policy applies to hosts
// without a global policy of their own, fails them closed with the
// service missing (the condition names the flag, not a field of theirs),
// and with fail-open is dropped with a warning; an opted-out host never
// depends on the service.
func TestDefaultGlobalRateLimitPolicy(t *testing.T) {
	ref := types.NamespacedName{Namespace: "rl", Name: "rls"}
	optOut := root("apps/quiet", "quiet.example.com", route(svc("web", 80)))
	optOut.Spec.VirtualHost.RateLimitPolicy = &switchyardv1.RateLimitPolicy{Global: &switchyardv1.GlobalRateLimitPolicy{Disabled: true}}
	objs := []runtime.Object{
		root("apps/www", "www.example.com", route(svc("web", 80))),
		optOut,
		service("apps/web", 80),
		service("rl/rls", 8081),
	}
	opts := Options{
		RateLimitService: &ref,
		DefaultGlobalRateLimitPolicy: &switchyardv1.GlobalRateLimitPolicy{Descriptors: []switchyardv1.RateLimitDescriptor{
			{Entries: []switchyardv1.RateLimitDescriptorEntry{{RemoteAddress: &switchyardv1.RemoteAddressDescriptor{}}}},
		}},
	}

	res := Build(snapshot(t, objs...), opts)
	st := statusOf(t, res, objects.KindHTTPProxy, "apps/www")
	if len(st.Errors) != 1 || st.Errors[0].Reason != "RateLimitServiceUnavailable" || !strings.HasPrefix(st.Errors[0].Message, defaultPolicySource+": ") || !strings.Contains(st.Errors[0].Message, "ExtensionService rl/rls not found") {
		t.Fatalf("www without the service: %+v", st.Errors)
	}
	if len(res.DAG.VirtualHosts) != 1 || res.DAG.VirtualHosts[0].FQDN != "quiet.example.com" || res.DAG.VirtualHosts[0].RateLimitService != nil {
		t.Fatalf("only the opted-out host is served, without limits: %+v", res.DAG.VirtualHosts)
	}

	opts.RateLimitFailOpen = true
	res = Build(snapshot(t, objs...), opts)
	st = statusOf(t, res, objects.KindHTTPProxy, "apps/www")
	if len(st.Errors) != 0 || len(st.Warnings) != 1 || st.Warnings[0].Reason != "RateLimitServiceUnavailable" || len(res.DAG.VirtualHosts) != 2 {
		t.Fatalf("fail-open: errors %+v, warnings %+v, %d hosts", st.Errors, st.Warnings, len(res.DAG.VirtualHosts))
	}

	ext := extension("rl/rls", switchyardv1alpha1.ExtensionServiceTarget{Name: "rls", Port: 8081})
	res = Build(snapshot(t, append(objs, ext)...), opts)
	for _, vh := range res.DAG.VirtualHosts {
		limited := vh.RateLimitService != nil && len(vh.GlobalRateLimits) == 1 && vh.GlobalRateLimits[0].Entries[0].RemoteAddress
		if limited != (vh.FQDN == "www.example.com") {
			t.Errorf("%s: service %v, descriptors %+v", vh.FQDN, vh.RateLimitService, vh.GlobalRateLimits)
		}
		if s := vh.RateLimitService; s != nil && (!s.FailOpen || s.Domain != DefaultRateLimitDomain || s.ExtensionService != ref) {
			t.Errorf("service %+v: rl/rls, fail-open and the default domain", s)
		}
	}
	www := findRoot(t, objs[0].(*switchyardv1.HTTPProxy), snapshot(t, append(objs, ext)...), opts)
	quiet := findRoot(t, optOut, snapshot(t, append(objs, ext)...), opts)
	extKey := objects.NewKey(objects.KindExtensionService, ref)
	if !hasKey(www.Deps, extKey) || hasKey(quiet.Deps, extKey) {
		t.Errorf("only the limited host depends on the service: www %v, quiet %v", www.Deps, quiet.Deps)
	}
}

func findRoot(t *testing.T, p *switchyardv1.HTTPProxy, snap *objects.Snapshot, opts Options) *RootResult {
	t.Helper()
	return BuildRoot(snap, opts, snap.HTTPProxies[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}], BuildExtensionServices(snap))
}

func hasKey(keys []objects.Key, k objects.Key) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}
