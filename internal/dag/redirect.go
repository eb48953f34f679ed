package dag

import (
	"slices"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// InternalRedirect has Envoy follow the upstream's redirects itself
// (Envoy's internal_redirect_policy).
type InternalRedirect struct {
	// MaxRedirects is at least 1; 0 keeps Envoy's default, 1.
	MaxRedirects uint32
	// Codes are the statuses followed, sorted; empty means 302 only.
	Codes []uint32
	// CrossScheme is "", "Always" or "SafeOnly" (see the API field).
	CrossScheme string
	// DenyRepeatedRoute refuses a redirect back through a route already
	// taken.
	DenyRepeatedRoute bool
}

var internalRedirectCodes = []int32{301, 302, 303, 307, 308}

// internalRedirect converts a route's internalRedirectPolicy.
func (b *routeBuilder) internalRedirect(p *switchyardv1.HTTPInternalRedirectPolicy, r *switchyardv1.Route, out *Route) bool {
	if p == nil {
		return true
	}
	field := b.field + ".internalRedirectPolicy"
	if len(r.Services) == 0 {
		b.st.addWarning(ErrRoute, "InternalRedirectUnused", "%s: has no effect on a route without services", field)
		return true
	}
	ir := &InternalRedirect{DenyRepeatedRoute: p.DenyRepeatedRouteRedirect}
	if m := p.MaxInternalRedirects; m != nil {
		if *m < 1 || *m > 100 {
			b.st.addError(ErrRoute, "InvalidInternalRedirect", "%s.maxInternalRedirects: %d is not in 1-100", field, *m)
			return false
		}
		ir.MaxRedirects = uint32(*m)
	}
	for i, c := range p.RedirectResponseCodes {
		if !slices.Contains(internalRedirectCodes, int32(c)) {
			b.st.addError(ErrRoute, "InvalidInternalRedirect", "%s.redirectResponseCodes[%d]: %d is not one of 301, 302, 303, 307, 308", field, i, c)
			return false
		}
		if !slices.Contains(ir.Codes, uint32(c)) {
			ir.Codes = append(ir.Codes, uint32(c))
		}
	}
	slices.Sort(ir.Codes)
	switch p.AllowCrossSchemeRedirect {
	case "", "Never":
	case "Always", "SafeOnly":
		ir.CrossScheme = p.AllowCrossSchemeRedirect
	default:
		b.st.addError(ErrRoute, "InvalidInternalRedirect", "%s.allowCrossSchemeRedirect: %q is not one of Always, Never, SafeOnly", field, p.AllowCrossSchemeRedirect)
		return false
	}
	out.InternalRedirect = ir
	return true
}
