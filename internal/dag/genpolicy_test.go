package dag_test

import (
	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// genCIDRs are the ranges IP filters draw from, the bad ones being what a
// typo makes of them.
var genCIDRs = pool[string]{
	good: []string{"10.0.0.0/8", "192.168.1.7", "2001:db8::/32", "0.0.0.0/0"},
	bad:  []string{"10.0.0.0/33", "not-an-ip", "", "fe80::1%eth0"},
}

// ipFilters draws an allow or a deny list (or, rarely, both, which is
// wrong), or neither.
func (c *choices) ipFilters() switchyardv1.IPFilterPolicies {
	var p switchyardv1.IPFilterPolicies
	if !c.oneIn(4) {
		return p
	}
	rule := func() switchyardv1.IPFilterPolicy {
		return switchyardv1.IPFilterPolicy{
			Source: draw(c, pool[switchyardv1.IPFilterSource]{good: []switchyardv1.IPFilterSource{switchyardv1.IPFilterSourcePeer, switchyardv1.IPFilterSourceRemote}, bad: []switchyardv1.IPFilterSource{"", "Client"}}),
			CIDR:   draw(c, genCIDRs),
		}
	}
	rules := []switchyardv1.IPFilterPolicy{rule()}
	if c.oneIn(2) {
		rules = append(rules, rule())
	}
	switch c.intn(5) {
	case 4:
		p.IPAllowFilterPolicy, p.IPDenyFilterPolicy = rules, rules[:1]
	case 2, 3:
		p.IPDenyFilterPolicy = rules
	default:
		p.IPAllowFilterPolicy = rules
	}
	return p
}

// cors draws a CORS policy, nil three times in four; its fields come from
// pools with wrong values.
func (c *choices) cors() *switchyardv1.CORSPolicy {
	if !c.oneIn(4) {
		return nil
	}
	return &switchyardv1.CORSPolicy{
		AllowCredentials: c.oneIn(2),
		AllowOrigin:      []string{draw(c, pool[string]{good: []string{"*", "https://a.example.com", `https://.*\.example\.com`}, bad: []string{"https://(", ""}})},
		AllowMethods:     []switchyardv1.CORSHeaderValue{draw(c, pool[switchyardv1.CORSHeaderValue]{good: []switchyardv1.CORSHeaderValue{"GET", "*"}, bad: []switchyardv1.CORSHeaderValue{"GE T", ""}})},
		AllowHeaders:     []switchyardv1.CORSHeaderValue{switchyardv1.CORSHeaderValue(draw(c, genHeaders))},
		MaxAge:           draw(c, pool[string]{good: []string{"", "10m", "0s"}, bad: []string{"-1s", "forever"}}),
	}
}

// rateLimit draws a local rate limit, nil three times in four.
func (c *choices) rateLimit() *switchyardv1.RateLimitPolicy {
	if !c.oneIn(4) {
		return nil
	}
	p := &switchyardv1.RateLimitPolicy{Local: &switchyardv1.LocalRateLimitPolicy{
		Requests:           draw(c, pool[uint32]{good: []uint32{1, 100}, bad: []uint32{0}}),
		Unit:               draw(c, pool[string]{good: []string{"second", "minute", "hour"}, bad: []string{"day", ""}}),
		Burst:              pick(c, []uint32{0, 20}),
		ResponseStatusCode: draw(c, pool[uint32]{good: []uint32{0, 429, 503}, bad: []uint32{418, 200}}),
	}}
	if c.oneIn(3) {
		// Global policies fail closed unless disabled.
		p.Global = &switchyardv1.GlobalRateLimitPolicy{Disabled: !c.oneIn(3), Descriptors: []switchyardv1.RateLimitDescriptor{{
			Entries: []switchyardv1.RateLimitDescriptorEntry{{RemoteAddress: &switchyardv1.RemoteAddressDescriptor{}}},
		}}}
	}
	return p
}

// jwtProviders draws a host's JWT providers (usually none), with wrong
// URIs, names and defaults in the pools.
func (c *choices) jwtProviders() []switchyardv1.JWTProvider {
	if !c.oneIn(4) {
		return nil
	}
	var out []switchyardv1.JWTProvider
	for range 1 + c.intn(2) {
		out = append(out, switchyardv1.JWTProvider{
			Name:    draw(c, pool[string]{good: []string{"a", "b"}, bad: []string{"", "Bad Name"}}),
			Default: c.oneIn(2),
			RemoteJWKS: switchyardv1.RemoteJWKS{
				URI:     draw(c, pool[string]{good: []string{"https://idp.example.com/jwks", "http://10.0.0.1:8080/k"}, bad: []string{"ftp://x/y", ""}}),
				Timeout: draw(c, genDurations),
			},
		})
	}
	return out
}

// jwtVerification draws a route's JWT choice, nil three times in four.
func (c *choices) jwtVerification() *switchyardv1.JWTVerificationPolicy {
	if !c.oneIn(4) {
		return nil
	}
	return &switchyardv1.JWTVerificationPolicy{Require: pick(c, []string{"", "a", "missing"}), Disabled: c.oneIn(3)}
}
