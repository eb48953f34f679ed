package k8ssource_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// policyProxy carries every traffic policy field, host and route.
func policyProxy(ns string) *switchyardv1.HTTPProxy {
	p := proxy(ns, "policies", "cert")
	vh := p.Spec.VirtualHost
	vh.IPAllowFilterPolicy = []switchyardv1.IPFilterPolicy{{Source: switchyardv1.IPFilterSourcePeer, CIDR: "10.0.0.0/8"}}
	vh.CORSPolicy = &switchyardv1.CORSPolicy{
		AllowCredentials: true, AllowPrivateNetwork: true,
		AllowOrigin:   []string{"*", `https://.*\.example\.com`},
		AllowMethods:  []switchyardv1.CORSHeaderValue{"GET", "POST"},
		AllowHeaders:  []switchyardv1.CORSHeaderValue{"authorization"},
		ExposeHeaders: []switchyardv1.CORSHeaderValue{"Content-Length"},
		MaxAge:        "10m",
	}
	vh.RateLimitPolicy = &switchyardv1.RateLimitPolicy{Local: &switchyardv1.LocalRateLimitPolicy{
		Requests: 100, Unit: "hour", Burst: 20, ResponseStatusCode: 503,
		ResponseHeadersToAdd: []switchyardv1.HeaderValue{{Name: "x-limited", Value: "true"}},
	}}
	vh.JWTProviders = []switchyardv1.JWTProvider{{
		Name: "idp", Default: true, Issuer: "https://idp.example.com", Audiences: []string{"api"}, ForwardJWT: true,
		RemoteJWKS: switchyardv1.RemoteJWKS{
			URI: "https://idp.example.com/jwks", Timeout: "1s", CacheDuration: "5m", DNSLookupFamily: "v4",
			UpstreamValidation: &switchyardv1.UpstreamValidation{CACertificate: "ca", SubjectName: "idp.example.com"},
		},
	}}
	r := &p.Spec.Routes[0]
	r.IPDenyFilterPolicy = []switchyardv1.IPFilterPolicy{{Source: switchyardv1.IPFilterSourceRemote, CIDR: "192.168.0.0/16"}}
	r.RateLimitPolicy = &switchyardv1.RateLimitPolicy{
		Local: &switchyardv1.LocalRateLimitPolicy{Requests: 5, Unit: "minute"},
		Global: &switchyardv1.GlobalRateLimitPolicy{Disabled: true, Descriptors: []switchyardv1.RateLimitDescriptor{{Entries: []switchyardv1.RateLimitDescriptorEntry{
			{RemoteAddress: &switchyardv1.RemoteAddressDescriptor{}},
			{GenericKey: &switchyardv1.GenericKeyDescriptor{Key: "k", Value: "v"}},
			{RequestHeader: &switchyardv1.RequestHeaderDescriptor{HeaderName: "x-user", DescriptorKey: "user"}},
			{RequestHeaderValueMatch: &switchyardv1.RequestHeaderValueMatchDescriptor{
				Headers: []switchyardv1.HeaderMatchCondition{{Name: "x-tier", Exact: "free"}}, ExpectMatch: new(bool), Value: "free",
			}},
		}}}},
	}
	r.JWTVerificationPolicy = &switchyardv1.JWTVerificationPolicy{Disabled: true}
	return p
}

// TestPolicyFieldsSurviveTheAPIServer creates an HTTPProxy with every
// traffic policy field through a real kube-apiserver: the CRD's
// structural schema must keep all of them (an unknown field would be
// pruned silently), and its enums must refuse what Contour's refuse.
func TestPolicyFieldsSurviveTheAPIServer(t *testing.T) {
	ns := env.Namespace(t)
	want := policyProxy(ns)
	got := want.DeepCopy()
	mustCreate(t, got)
	if d := cmp.Diff(want.Spec, got.Spec); d != "" {
		t.Errorf("the apiserver changed the spec (-sent +stored):\n%s", d)
	}

	bad := policyProxy(ns)
	bad.Name = "bad-unit"
	bad.Spec.VirtualHost.RateLimitPolicy.Local.Unit = "day"
	err := crdClient(t).Post().Namespace(ns).Resource("httpproxies").Body(bad).Do(context.Background()).Error()
	if err == nil || !strings.Contains(err.Error(), "unit") {
		t.Errorf("creating a proxy with rateLimitPolicy.local.unit day: %v, want a refusal naming unit", err)
	}
}
