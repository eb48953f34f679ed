package churn

import (
	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// ipFilterChoices are the IP filters a step may give a host or a route:
// none, an allow list, a deny list, and a wrong one (a bad range, which
// keeps a host off the wire and makes a route answer 503).
var ipFilterChoices = []switchyardv1.IPFilterPolicies{
	{},
	{IPAllowFilterPolicy: []switchyardv1.IPFilterPolicy{{Source: switchyardv1.IPFilterSourcePeer, CIDR: "10.0.0.0/8"}}},
	{IPDenyFilterPolicy: []switchyardv1.IPFilterPolicy{{Source: switchyardv1.IPFilterSourceRemote, CIDR: "192.168.0.1"}}},
	{IPDenyFilterPolicy: []switchyardv1.IPFilterPolicy{{Source: switchyardv1.IPFilterSourcePeer, CIDR: "10.0.0.0/40"}}},
}

// corsChoices are the CORS policies a step may give a host: none, a good
// one and a wrong one (served without CORS).
var corsChoices = []*switchyardv1.CORSPolicy{
	nil,
	{AllowOrigin: []string{"*"}, AllowMethods: []switchyardv1.CORSHeaderValue{"GET"}, MaxAge: "10m"},
	{AllowOrigin: []string{"https://("}, AllowMethods: []switchyardv1.CORSHeaderValue{"GET"}},
}

// rateLimitChoices are the rate limits a step may set: a disabled global
// policy (an opt-out of the host's or the default one), a good local and
// global one (the global one asks the rate limit service, when the test
// names one), and a wrong one (a unit Contour does not have).
var rateLimitChoices = []*switchyardv1.RateLimitPolicy{
	{Global: &switchyardv1.GlobalRateLimitPolicy{Disabled: true}},
	{
		Local: &switchyardv1.LocalRateLimitPolicy{Requests: 100, Unit: "minute", Burst: 10},
		Global: &switchyardv1.GlobalRateLimitPolicy{Descriptors: []switchyardv1.RateLimitDescriptor{
			{Entries: []switchyardv1.RateLimitDescriptorEntry{{RemoteAddress: &switchyardv1.RemoteAddressDescriptor{}}}},
			{Entries: []switchyardv1.RateLimitDescriptorEntry{{GenericKey: &switchyardv1.GenericKeyDescriptor{Value: "churn"}}}},
		}},
	},
	{Local: &switchyardv1.LocalRateLimitPolicy{Requests: 1, Unit: "day"}},
}

// jwtChoices are the JWT providers a step may give a host: none, a
// default provider (which needs TLS, so a plain host goes off the wire)
// and a wrong one.
var jwtChoices = [][]switchyardv1.JWTProvider{
	nil,
	{{Name: "idp", Default: true, RemoteJWKS: switchyardv1.RemoteJWKS{URI: "https://idp.example.com/jwks"}}},
	{{Name: "idp", RemoteJWKS: switchyardv1.RemoteJWKS{URI: "ftp://idp.example.com/jwks"}}},
}

// policyChange sets or clears a traffic policy of the host or of one
// route.
func (m *Mutator) policyChange(p *switchyardv1.HTTPProxy) {
	if vh := p.Spec.VirtualHost; vh != nil && m.rng.Intn(3) == 0 {
		// One draw for both, as below.
		k := m.rng.Intn(len(corsChoices))
		vh.CORSPolicy, vh.JWTProviders = corsChoices[k], jwtChoices[k]
		return
	}
	// One draw picks both the IP filter and the rate limit, so that the
	// mutator's random sequence stays what the coverage of
	// TestIncrementalEqualsFullBuild was checked with.
	i := m.rng.Intn(len(ipFilterChoices))
	f, l := ipFilterChoices[i], rateLimitChoices[i%len(rateLimitChoices)]
	if vh := p.Spec.VirtualHost; vh != nil && m.rng.Intn(2) == 0 {
		vh.IPFilterPolicies, vh.RateLimitPolicy = f, l
		return
	}
	if len(p.Spec.Routes) > 0 {
		r := &p.Spec.Routes[m.rng.Intn(len(p.Spec.Routes))]
		r.IPFilterPolicies, r.RateLimitPolicy = f, l
	}
}
