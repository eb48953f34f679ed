package dag

import (
	"fmt"
	"strconv"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// globalRateLimitUnavailable says why a global rate limit cannot be
// honoured. Switchyard has no rate limit service to send descriptors to,
// and limits must not silently vanish, so a global policy fails closed,
// exactly as it will when a configured service is missing.
const globalRateLimitUnavailable = "global rate limiting needs a rate limit service, and this Switchyard has none configured"

// The CRD's limits on descriptors, entries and header conditions, which
// a directory source does not apply.
const (
	maxDescriptors       = 8
	maxDescriptorHeaders = 4
)

// globalRateLimitActive validates a rateLimitPolicy.global (field names
// the rateLimitPolicy) and reports whether it asks for limiting: it has
// descriptors and is not disabled. Every descriptor is checked, so that
// a policy's errors are reported whatever becomes of the service.
func globalRateLimitActive(p *switchyardv1.RateLimitPolicy, field string) (bool, error) {
	if p == nil || p.Global == nil {
		return false, nil
	}
	g := p.Global
	field += ".global"
	if len(g.Descriptors) > maxDescriptors {
		return false, fmt.Errorf("%s.descriptors: %d descriptors, more than the limit of %d", field, len(g.Descriptors), maxDescriptors)
	}
	for i, d := range g.Descriptors {
		f := field + ".descriptors[" + strconv.Itoa(i) + "]"
		switch {
		case len(d.Entries) == 0:
			return false, fmt.Errorf("%s.entries: must list at least one entry", f)
		case len(d.Entries) > maxDescriptors:
			return false, fmt.Errorf("%s.entries: %d entries, more than the limit of %d", f, len(d.Entries), maxDescriptors)
		}
		for j, e := range d.Entries {
			if err := validateDescriptorEntry(e); err != nil {
				return false, fmt.Errorf("%s.entries[%d]%v", f, j, err)
			}
		}
	}
	return !g.Disabled && len(g.Descriptors) > 0, nil
}

// validateDescriptorEntry checks one entry; its errors start with the
// entry's field (".genericKey.value: ...").
func validateDescriptorEntry(e switchyardv1.RateLimitDescriptorEntry) error {
	if n := countSet(e.GenericKey != nil, e.RequestHeader != nil, e.RequestHeaderValueMatch != nil, e.RemoteAddress != nil); n != 1 {
		return fmt.Errorf(": exactly one of genericKey, requestHeader, requestHeaderValueMatch and remoteAddress must be set, found %d", n)
	}
	switch {
	case e.GenericKey != nil:
		if e.GenericKey.Value == "" {
			return fmt.Errorf(".genericKey.value: must be set")
		}
		if err := validateText(e.GenericKey.Key + e.GenericKey.Value); err != nil {
			return fmt.Errorf(".genericKey: %v", err)
		}
	case e.RequestHeader != nil:
		if err := validateHeaderName(e.RequestHeader.HeaderName); err != nil {
			return fmt.Errorf(".requestHeader.headerName: %v", err)
		}
		if e.RequestHeader.DescriptorKey == "" {
			return fmt.Errorf(".requestHeader.descriptorKey: must be set")
		}
		if err := validateText(e.RequestHeader.DescriptorKey); err != nil {
			return fmt.Errorf(".requestHeader.descriptorKey: %v", err)
		}
	case e.RequestHeaderValueMatch != nil:
		m := e.RequestHeaderValueMatch
		if len(m.Headers) == 0 || len(m.Headers) > maxDescriptorHeaders {
			return fmt.Errorf(".requestHeaderValueMatch.headers: must list 1 to %d header conditions", maxDescriptorHeaders)
		}
		for k := range m.Headers {
			if _, err := parseHeaderCondition(&m.Headers[k]); err != nil {
				return fmt.Errorf(".requestHeaderValueMatch.headers[%d]: %v", k, err)
			}
		}
		if m.Value == "" {
			return fmt.Errorf(".requestHeaderValueMatch.value: must be set")
		}
		if err := validateText(m.Value); err != nil {
			return fmt.Errorf(".requestHeaderValueMatch.value: %v", err)
		}
	}
	return nil
}

// hostGlobalRateLimit fails the host closed when it asks for a global
// rate limit (see globalRateLimitUnavailable).
func (rb *rootBuilder) hostGlobalRateLimit(root *switchyardv1.HTTPProxy, st *Status) bool {
	const field = "spec.virtualhost.rateLimitPolicy"
	active, err := globalRateLimitActive(root.Spec.VirtualHost.RateLimitPolicy, field)
	switch {
	case err != nil:
		st.addError(ErrVirtualHost, "InvalidRateLimitPolicy", "%v; the virtual host is not served until it is fixed", err)
		return false
	case active:
		st.addError(ErrVirtualHost, "RateLimitServiceUnavailable", "%s.global: %s; the virtual host is not served rather than served unlimited", field, globalRateLimitUnavailable)
		return false
	}
	return true
}

// routeGlobalRateLimit makes a route that asks for a global rate limit
// answer invalidRouteStatus. A route that disables the global policy is
// fine.
func (b *routeBuilder) routeGlobalRateLimit(r *switchyardv1.Route) bool {
	active, err := globalRateLimitActive(r.RateLimitPolicy, b.field+".rateLimitPolicy")
	switch {
	case err != nil:
		b.st.addError(ErrRoute, "InvalidRateLimitPolicy", "%v", err)
		return false
	case active:
		b.st.addError(ErrRoute, "RateLimitServiceUnavailable", "%s.rateLimitPolicy.global: %s; the route answers %d rather than forward unlimited", b.field, globalRateLimitUnavailable, invalidRouteStatus)
		return false
	}
	return true
}
