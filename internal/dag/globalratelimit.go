package dag

import (
	"cmp"
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// The CRD's limits on descriptors, entries and header conditions, which
// a directory source does not apply.
const (
	maxDescriptors       = 8
	maxDescriptorHeaders = 4
)

// DefaultRateLimitDomain is the domain of the rate limit service's
// configuration unless --rate-limit-domain says otherwise.
const DefaultRateLimitDomain = "switchyard"

// defaultPolicySource names the default global policy in conditions: it is
// the operator's flag, not a field of the proxy.
const defaultPolicySource = "the default global rate limit policy (--rate-limit-default-policy)"

// RateLimitService is the rate limit service (--rate-limit-service) as
// one build resolved it. Every host that sends descriptors uses the same
// one, so the plain-HTTP listener, shared by all hosts, can carry it.
type RateLimitService struct {
	ExtensionService types.NamespacedName
	Cluster          *Cluster
	// Timeout bounds each call; 0 leaves Envoy's default (20ms).
	Timeout time.Duration
	// FailOpen lets requests through when the service cannot answer.
	FailOpen bool
	// Domain names the service's configuration; XHeaders adds the
	// X-RateLimit headers to responses.
	Domain   string
	XHeaders bool
}

// Same reports whether s and o configure the same filter.
func (s *RateLimitService) Same(o *RateLimitService) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.ExtensionService == o.ExtensionService && s.Cluster.Name == o.Cluster.Name && s.Timeout == o.Timeout && s.FailOpen == o.FailOpen && s.Domain == o.Domain && s.XHeaders == o.XHeaders
}

// RateLimitDescriptor is one descriptor sent to the rate limit service:
// Envoy sends it only when every entry produced a value.
type RateLimitDescriptor struct {
	Entries []RateLimitEntry
}

// RateLimitEntry is one entry of a descriptor; exactly one field is set.
type RateLimitEntry struct {
	// GenericKey is a fixed key and value; an empty key is Envoy's
	// default, "generic_key".
	GenericKey *DescriptorKeyValue
	// RequestHeader sends a header's value under DescriptorKey.
	RequestHeader *RequestHeaderEntry
	// HeaderValueMatch sends Value when the headers match (or, without
	// ExpectMatch, when they do not).
	HeaderValueMatch *HeaderValueMatchEntry
	// RemoteAddress sends the client address under "remote_address".
	RemoteAddress bool
}

// DescriptorKeyValue is a generic_key entry.
type DescriptorKeyValue struct{ Key, Value string }

// RequestHeaderEntry is a request_headers entry.
type RequestHeaderEntry struct{ HeaderName, DescriptorKey string }

// HeaderValueMatchEntry is a header_value_match entry.
type HeaderValueMatchEntry struct {
	Headers     []HeaderMatch
	ExpectMatch bool
	Value       string
}

// ValidateGlobalRateLimitPolicy checks a policy with the rules applied to
// an HTTPProxy's, for a policy given some other way (the default policy's
// file); field names it in errors.
func ValidateGlobalRateLimitPolicy(p *switchyardv1.GlobalRateLimitPolicy, field string) error {
	_, err := parseGlobalRateLimit(p, field)
	return err
}

// parseGlobalRateLimit validates a rateLimitPolicy.global (field names
// it) and returns its descriptors, none when it is disabled. Every
// descriptor is checked, so that a policy's errors are reported whatever
// becomes of the service.
func parseGlobalRateLimit(g *switchyardv1.GlobalRateLimitPolicy, field string) ([]RateLimitDescriptor, error) {
	if g == nil {
		return nil, nil
	}
	if len(g.Descriptors) > maxDescriptors {
		return nil, fmt.Errorf("%s.descriptors: %d descriptors, more than the limit of %d", field, len(g.Descriptors), maxDescriptors)
	}
	out := make([]RateLimitDescriptor, 0, len(g.Descriptors))
	for i, d := range g.Descriptors {
		f := field + ".descriptors[" + strconv.Itoa(i) + "]"
		switch {
		case len(d.Entries) == 0:
			return nil, fmt.Errorf("%s.entries: must list at least one entry", f)
		case len(d.Entries) > maxDescriptors:
			return nil, fmt.Errorf("%s.entries: %d entries, more than the limit of %d", f, len(d.Entries), maxDescriptors)
		}
		desc := RateLimitDescriptor{Entries: make([]RateLimitEntry, 0, len(d.Entries))}
		for j, e := range d.Entries {
			entry, err := parseDescriptorEntry(e)
			if err != nil {
				return nil, fmt.Errorf("%s.entries[%d]%v", f, j, err)
			}
			desc.Entries = append(desc.Entries, entry)
		}
		out = append(out, desc)
	}
	if g.Disabled || len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// parseDescriptorEntry reads one entry; its errors start with the
// entry's field (".genericKey.value: ...").
func parseDescriptorEntry(e switchyardv1.RateLimitDescriptorEntry) (RateLimitEntry, error) {
	var out RateLimitEntry
	if n := countSet(e.GenericKey != nil, e.RequestHeader != nil, e.RequestHeaderValueMatch != nil, e.RemoteAddress != nil); n != 1 {
		return out, fmt.Errorf(": exactly one of genericKey, requestHeader, requestHeaderValueMatch and remoteAddress must be set, found %d", n)
	}
	switch {
	case e.GenericKey != nil:
		if e.GenericKey.Value == "" {
			return out, fmt.Errorf(".genericKey.value: must be set")
		}
		if err := validateText(e.GenericKey.Key + e.GenericKey.Value); err != nil {
			return out, fmt.Errorf(".genericKey: %v", err)
		}
		out.GenericKey = &DescriptorKeyValue{Key: e.GenericKey.Key, Value: e.GenericKey.Value}
	case e.RequestHeader != nil:
		if err := validateHeaderName(e.RequestHeader.HeaderName); err != nil {
			return out, fmt.Errorf(".requestHeader.headerName: %v", err)
		}
		if e.RequestHeader.DescriptorKey == "" {
			return out, fmt.Errorf(".requestHeader.descriptorKey: must be set")
		}
		if err := validateText(e.RequestHeader.DescriptorKey); err != nil {
			return out, fmt.Errorf(".requestHeader.descriptorKey: %v", err)
		}
		out.RequestHeader = &RequestHeaderEntry{HeaderName: e.RequestHeader.HeaderName, DescriptorKey: e.RequestHeader.DescriptorKey}
	case e.RequestHeaderValueMatch != nil:
		m := e.RequestHeaderValueMatch
		if len(m.Headers) == 0 || len(m.Headers) > maxDescriptorHeaders {
			return out, fmt.Errorf(".requestHeaderValueMatch.headers: must list 1 to %d header conditions", maxDescriptorHeaders)
		}
		hv := &HeaderValueMatchEntry{ExpectMatch: m.ExpectMatch == nil || *m.ExpectMatch, Value: m.Value}
		for k := range m.Headers {
			hm, err := parseHeaderCondition(&m.Headers[k])
			if err != nil {
				return out, fmt.Errorf(".requestHeaderValueMatch.headers[%d]: %v", k, err)
			}
			hv.Headers = append(hv.Headers, hm)
		}
		if m.Value == "" {
			return out, fmt.Errorf(".requestHeaderValueMatch.value: must be set")
		}
		if err := validateText(m.Value); err != nil {
			return out, fmt.Errorf(".requestHeaderValueMatch.value: %v", err)
		}
		out.HeaderValueMatch = hv
	default:
		out.RemoteAddress = true
	}
	return out, nil
}

// rateLimitService resolves --rate-limit-service once per root, or says
// why it cannot. The operator named the service, so its
// allowedNamespaces do not apply, as with --global-authorization.
func (rb *rootBuilder) rateLimitService() (*RateLimitService, string) {
	hp := &rb.hostPolicy
	if hp.rlResolved {
		return hp.rlService, hp.rlWhy
	}
	hp.rlResolved = true
	ref := rb.opts.RateLimitService
	if ref == nil {
		hp.rlWhy = "global rate limiting needs a rate limit service, and none is configured (--rate-limit-service)"
		return nil, hp.rlWhy
	}
	rb.deps.add(objects.NewKey(objects.KindExtensionService, *ref))
	ext := rb.exts[*ref]
	switch {
	case ext == nil:
		hp.rlWhy = fmt.Sprintf("the rate limit service (--rate-limit-service): ExtensionService %s not found", ref)
	case ext.Cluster == nil:
		hp.rlWhy = fmt.Sprintf("the rate limit service (--rate-limit-service): ExtensionService %s is invalid: %s", ref, ext.Status.Description)
	default:
		hp.rlService = &RateLimitService{
			ExtensionService: *ref, Cluster: ext.Cluster, FailOpen: rb.opts.RateLimitFailOpen,
			Domain: cmp.Or(rb.opts.RateLimitDomain, DefaultRateLimitDomain), XHeaders: rb.opts.RateLimitXHeaders,
		}
		if ext.ResponseTimeout != nil {
			hp.rlService.Timeout = *ext.ResponseTimeout
		}
	}
	return hp.rlService, hp.rlWhy
}

// useRateLimitService marks the service used by this host: its cluster
// and secrets are served, and its HCM gets the rate limit filter.
func (rb *rootBuilder) useRateLimitService(svc *RateLimitService) {
	if rb.hostPolicy.rlUsed {
		return
	}
	rb.hostPolicy.rlUsed = true
	rb.clusters[svc.Cluster.Name] = svc.Cluster
	for _, s := range rb.exts[svc.ExtensionService].Secrets {
		rb.addSecret(s)
	}
}

// hostGlobalRateLimit reads the host's global policy, or the default one
// when the host sets none. When the service is unavailable the host fails
// closed (is not served) unless fail-open was asked for: then it is served
// without its limits, with a warning.
func (rb *rootBuilder) hostGlobalRateLimit(root *switchyardv1.HTTPProxy, st *Status) bool {
	field := "spec.virtualhost.rateLimitPolicy.global"
	var g *switchyardv1.GlobalRateLimitPolicy
	if p := root.Spec.VirtualHost.RateLimitPolicy; p != nil && p.Global != nil {
		g = p.Global
	} else if root.Spec.TCPProxy == nil {
		// A host that forwards TCP has no requests to limit, and must not
		// be reported as refusing them.
		g, field = rb.opts.DefaultGlobalRateLimitPolicy, defaultPolicySource
	}
	descs, err := parseGlobalRateLimit(g, field)
	switch {
	case err != nil:
		st.addError(ErrVirtualHost, "InvalidRateLimitPolicy", "%v; the virtual host is not served until it is fixed", err)
		return false
	case len(descs) == 0:
		return true
	case root.Spec.TCPProxy != nil:
		st.addError(ErrVirtualHost, "RateLimitWithTCPProxy", "%s: limits HTTP requests and cannot be used with spec.tcpproxy", field)
		return false
	}
	svc, why := rb.rateLimitService()
	if svc == nil {
		if rb.opts.RateLimitFailOpen {
			st.addWarning(ErrVirtualHost, "RateLimitServiceUnavailable", "%s: %s; served without global rate limits, as --rate-limit-fail-open asks", field, why)
			return true
		}
		st.addError(ErrVirtualHost, "RateLimitServiceUnavailable", "%s: %s; the virtual host is not served rather than served unlimited", field, why)
		return false
	}
	rb.useRateLimitService(svc)
	rb.hostPolicy.globalRateLimits = descs
	return true
}

// routeGlobalRateLimit reads a route's global policy, which replaces the
// host's; disabled, the route sends no descriptors at all. Without the
// service the route answers invalidRouteStatus, or with fail-open is
// served without its limits.
func (b *routeBuilder) routeGlobalRateLimit(r *switchyardv1.Route, out *Route) bool {
	if r.RateLimitPolicy == nil || r.RateLimitPolicy.Global == nil {
		return true
	}
	field := b.field + ".rateLimitPolicy.global"
	descs, err := parseGlobalRateLimit(r.RateLimitPolicy.Global, field)
	switch {
	case err != nil:
		b.st.addError(ErrRoute, "InvalidRateLimitPolicy", "%v", err)
		return false
	case r.RateLimitPolicy.Global.Disabled:
		// Only the host's limits can be ignored; without them the route
		// has nothing to opt out of, and its configuration stays as it was.
		out.GlobalRateLimitDisabled = len(b.rb.hostPolicy.globalRateLimits) > 0
		return true
	case len(descs) == 0:
		return true
	}
	svc, why := b.rb.rateLimitService()
	if svc == nil {
		if b.rb.opts.RateLimitFailOpen {
			b.st.addWarning(ErrRoute, "RateLimitServiceUnavailable", "%s: %s; served without global rate limits, as --rate-limit-fail-open asks", field, why)
			return true
		}
		b.st.addError(ErrRoute, "RateLimitServiceUnavailable", "%s: %s; the route answers %d rather than forward unlimited", field, why, invalidRouteStatus)
		return false
	}
	b.rb.useRateLimitService(svc)
	out.GlobalRateLimits = descs
	return true
}
