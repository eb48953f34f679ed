package dag_test

import (
	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// proxy generates an HTTPProxy: a root (with a virtualhost, maybe TLS,
// authorization and a tcpproxy) or an includable child, with routes and
// includes drawn from the generator's pools.
func (c *choices) proxy() *switchyardv1.HTTPProxy {
	p := &switchyardv1.HTTPProxy{ObjectMeta: c.meta(pick(c, genProxies))}
	if !c.oneIn(2) {
		p.Spec.VirtualHost = c.virtualHost()
	}
	if c.oneIn(12) {
		p.Spec.IngressClassName = "other"
	}
	for range 1 + c.intn(3) {
		p.Spec.Routes = append(p.Spec.Routes, c.route())
	}
	for range c.intn(3) {
		inc := switchyardv1.Include{Name: pick(c, genProxies), Conditions: c.conditions(true)}
		if c.oneIn(3) {
			inc.Namespace = pick(c, genNamespaces)
		}
		p.Spec.Includes = append(p.Spec.Includes, inc)
	}
	if c.oneIn(5) {
		p.Spec.TCPProxy = c.tcpProxy()
	}
	return p
}

func (c *choices) virtualHost() *switchyardv1.VirtualHost {
	vh := &switchyardv1.VirtualHost{Fqdn: draw(c, genFQDNs)}
	if c.oneIn(2) {
		t := &switchyardv1.TLS{SecretName: draw(c, genSecrets)}
		switch c.intn(6) {
		case 5:
			t.SecretName, t.Passthrough = "", true
		case 4:
			t.ClientValidation = &switchyardv1.DownstreamValidation{CACertificate: draw(c, genSecrets)}
		case 3:
			t.MinimumProtocolVersion, t.MaximumProtocolVersion = pick(c, []string{"1.3", "1.1", ""}), pick(c, []string{"1.2", ""})
		}
		vh.TLS = t
	}
	if c.oneIn(3) {
		vh.Authorization = &switchyardv1.AuthorizationServer{
			ResponseTimeout: draw(c, genDurations),
			FailOpen:        c.oneIn(2),
		}
		if !c.oneIn(4) {
			vh.Authorization.ExtensionServiceRef = &switchyardv1.ExtensionServiceReference{Name: pick(c, []string{"auth", "auth2"}), Namespace: pick(c, []string{"", "a", "b"})}
		}
		if c.oneIn(3) {
			vh.Authorization.AuthPolicy = &switchyardv1.AuthorizationPolicy{Disabled: c.oneIn(2), Context: map[string]string{"k": "v"}}
		}
		if c.oneIn(4) {
			vh.Authorization.WithRequestBody = &switchyardv1.AuthorizationServerBufferSettings{MaxRequestBytes: maybe(c, pool[int32]{[]int32{1024}, []int32{0, -1}})}
		}
	}
	vh.IPFilterPolicies = c.ipFilters()
	vh.CORSPolicy = c.cors()
	vh.RateLimitPolicy = c.rateLimit()
	vh.JWTProviders = c.jwtProviders()
	return vh
}

func (c *choices) conditions(include bool) []switchyardv1.MatchCondition {
	var out []switchyardv1.MatchCondition
	for range c.intn(3) {
		var m switchyardv1.MatchCondition
		switch c.intn(6) {
		case 0, 1:
			m.Prefix = draw(c, genPrefixes)
		case 2:
			m.Exact = draw(c, genPrefixes)
		case 3:
			m.Regex = draw(c, genRegexes)
		case 4:
			m.Header = &switchyardv1.HeaderMatchCondition{Name: draw(c, genHeaders), IgnoreCase: c.oneIn(2)}
			switch c.intn(4) {
			case 0:
				m.Header.Present = true
			case 1:
				m.Header.Exact = draw(c, genValues)
			case 2:
				m.Header.NotContains = draw(c, genValues)
			default:
				m.Header.Regex = draw(c, genRegexes)
			}
		default:
			m.QueryParameter = &switchyardv1.QueryParameterMatchCondition{Name: draw(c, pool[string]{[]string{"q"}, []string{"", "x y"}}), Exact: draw(c, genValues), Present: c.oneIn(4)}
		}
		if include && c.oneIn(8) {
			m.Exact = "/exact-in-include"
		}
		out = append(out, m)
	}
	return out
}

func (c *choices) route() switchyardv1.Route {
	r := switchyardv1.Route{Conditions: c.conditions(false), PermitInsecure: c.oneIn(4), EnableWebsockets: c.oneIn(4)}
	if c.oneIn(3) {
		r.Name = pick(c, []string{"api", "web", "api"})
	}
	switch c.intn(8) {
	case 5:
		r.RequestRedirectPolicy = c.redirect()
	case 6:
		r.DirectResponsePolicy = &switchyardv1.HTTPDirectResponsePolicy{StatusCode: pick(c, []int32{200, 404, 99, 600}), Body: pick(c, []string{"", "gone", string(make([]byte, 5000))})}
	case 7:
		// no action at all
	default:
		for range 1 + c.intn(3) {
			r.Services = append(r.Services, c.routeService())
		}
	}
	c.routePolicies(&r)
	return r
}

func (c *choices) redirect() *switchyardv1.HTTPRequestRedirectPolicy {
	rd := &switchyardv1.HTTPRequestRedirectPolicy{StatusCode: maybe(c, pool[int32]{[]int32{301, 302, 308}, []int32{200, 399}})}
	if c.oneIn(2) {
		rd.Scheme = ptrTo(pick(c, []string{"https", "http", "ftp"}))
	}
	if c.oneIn(2) {
		rd.Hostname = ptrTo(draw(c, genFQDNs))
	}
	rd.Port = maybe(c, pool[int32]{[]int32{443, 8443}, []int32{0, 65536}})
	switch c.intn(3) {
	case 0:
		rd.Path = ptrTo(draw(c, genPrefixes))
	case 1:
		rd.Prefix = ptrTo(draw(c, genPrefixes))
	}
	return rd
}

func (c *choices) routeService() switchyardv1.Service {
	s := switchyardv1.Service{Name: draw(c, genServices), Port: draw(c, genPorts), Weight: maybe(c, genWeights), Priority: maybe(c, genPriorities)}
	if c.oneIn(5) {
		s.Mirror = true
	}
	if c.oneIn(4) {
		s.Protocol = ptrTo(pick(c, []string{"h2", "h2c", "tls", "http"}))
	}
	if c.oneIn(5) {
		s.RequestHeadersPolicy = c.headers()
	}
	if c.oneIn(6) {
		s.UpstreamValidation = &switchyardv1.UpstreamValidation{CACertificate: draw(c, genSecrets), SubjectName: "s.example.com"}
	}
	return s
}

func (c *choices) headers() *switchyardv1.HeadersPolicy {
	h := &switchyardv1.HeadersPolicy{}
	for range 1 + c.intn(2) {
		h.Set = append(h.Set, switchyardv1.HeaderValue{Name: draw(c, pool[string]{append([]string{"Host"}, genHeaders.good...), genHeaders.bad}), Value: draw(c, genValues)})
	}
	if c.oneIn(2) {
		h.Remove = []string{draw(c, pool[string]{genHeaders.good, append([]string{"host"}, genHeaders.bad...)})}
	}
	return h
}

func (c *choices) routePolicies(r *switchyardv1.Route) {
	if c.oneIn(3) {
		r.TimeoutPolicy = &switchyardv1.TimeoutPolicy{Response: draw(c, genDurations), Idle: draw(c, genDurations), IdleConnection: draw(c, genDurations)}
	}
	if c.oneIn(4) {
		r.RetryPolicy = &switchyardv1.RetryPolicy{Count: maybe(c, pool[int32]{[]int32{0, 3}, []int32{101, -1}}), PerTryTimeout: draw(c, genDurations), RetriableStatusCodes: pick(c, [][]int32{nil, {503}, {99}})}
	}
	if c.oneIn(4) {
		r.PathRewritePolicy = &switchyardv1.PathRewritePolicy{ReplacePrefix: []switchyardv1.ReplacePrefix{{Prefix: draw(c, pool[string]{append([]string{""}, genPrefixes.good...), genPrefixes.bad}), Replacement: draw(c, genPrefixes)}}}
	}
	if c.oneIn(4) {
		r.LoadBalancerPolicy = &switchyardv1.LoadBalancerPolicy{Strategy: pick(c, []switchyardv1.LoadBalancerStrategy{switchyardv1.RequestHash, switchyardv1.Cookie, switchyardv1.WeightedLeastRequest, "Bogus", ""})}
		if c.oneIn(2) {
			r.LoadBalancerPolicy.RequestHashPolicies = []switchyardv1.RequestHashPolicy{{HeaderHashOptions: &switchyardv1.HeaderHashOptions{HeaderName: draw(c, genHeaders)}, HashSourceIP: c.oneIn(3)}}
		}
	}
	if c.oneIn(5) {
		r.HealthCheckPolicy = &switchyardv1.HTTPHealthCheckPolicy{Path: draw(c, genPrefixes), Host: draw(c, genFQDNs), IntervalSeconds: maybe(c, pool[int64]{[]int64{5}, []int64{0, 100000}})}
	}
	if c.oneIn(5) {
		r.RequestHeadersPolicy = c.headers()
	}
	if c.oneIn(6) {
		r.ResponseHeadersPolicy = c.headers()
	}
	if c.oneIn(6) {
		r.AuthPolicy = &switchyardv1.AuthorizationPolicy{Disabled: c.oneIn(2), Context: map[string]string{"route": "x"}}
	}
	r.IPFilterPolicies = c.ipFilters()
	r.RateLimitPolicy = c.rateLimit()
	r.JWTVerificationPolicy = c.jwtVerification()
}

func (c *choices) tcpProxy() *switchyardv1.TCPProxy {
	tp := &switchyardv1.TCPProxy{}
	if c.oneIn(3) {
		tp.Include = &switchyardv1.TCPProxyInclude{Name: pick(c, genProxies)}
	}
	for range c.intn(3) {
		tp.Services = append(tp.Services, c.routeService())
	}
	if c.oneIn(4) {
		tp.HealthCheckPolicy = &switchyardv1.TCPHealthCheckPolicy{IntervalSeconds: maybe(c, pool[int64]{[]int64{1}, []int64{0}})}
	}
	return tp
}
