package dag

import (
	"fmt"
	"sort"
	"strings"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// headerScope says where a headers policy sits, which decides what it may
// do: only request policies may set Host, only a route's may take the host
// from a request header (Envoy's per-cluster rewrite is literal only), and
// vars are the variables its values may name.
type headerScope struct {
	request        bool
	hostFromHeader bool
	vars           headerVars
}

// hostRewrite is what a Host entry of a request policy becomes: a literal
// host, or the request header whose value is the host.
type hostRewrite struct {
	literal string
	header  string
}

// parseHeadersPolicy validates a headers policy and turns its values into
// Envoy format strings (see envoyHeaderValue). On request policies, a
// "Host" entry in set becomes a host rewrite (Envoy rewrites the authority
// instead of adding a second Host header), returned separately.
func parseHeadersPolicy(hp *switchyardv1.HeadersPolicy, sc headerScope) (*HeadersPolicy, hostRewrite, error) {
	var host hostRewrite
	if hp == nil {
		return nil, host, nil
	}
	out := &HeadersPolicy{}
	seen := map[string]bool{}
	for i, h := range hp.Set {
		if err := validateHeaderName(h.Name); err != nil {
			return nil, host, fmt.Errorf("set[%d].name: %v", i, err)
		}
		if err := validateHeaderValue(h.Value); err != nil {
			return nil, host, fmt.Errorf("set[%d].value: %v", i, err)
		}
		key := strings.ToLower(h.Name)
		if seen[key] {
			return nil, host, fmt.Errorf("set[%d].name: header %q is set twice", i, h.Name)
		}
		seen[key] = true
		if key == "host" {
			var err error
			if host, err = parseHostRewrite(h.Value, sc); err != nil {
				return nil, host, fmt.Errorf("set[%d]: %v", i, err)
			}
			continue
		}
		out.Set = append(out.Set, HeaderValue{Name: key, Value: envoyHeaderValue(h.Value, sc.vars)})
	}
	for i, name := range hp.Remove {
		if err := validateHeaderName(name); err != nil {
			return nil, host, fmt.Errorf("remove[%d]: %v", i, err)
		}
		if strings.EqualFold(name, "host") {
			return nil, host, fmt.Errorf("remove[%d]: the Host header cannot be removed", i)
		}
		out.Remove = append(out.Remove, strings.ToLower(name))
	}
	sort.Slice(out.Set, func(i, j int) bool { return out.Set[i].Name < out.Set[j].Name })
	sort.Strings(out.Remove)
	if len(out.Set) == 0 && len(out.Remove) == 0 {
		return nil, host, nil
	}
	return out, host, nil
}

// parseHostRewrite reads the value of a Host entry. host_rewrite_literal
// is not a format string, so a "%" there is either %REQ(name)% (the host
// comes from that request header) or a mistake.
func parseHostRewrite(value string, sc headerScope) (hostRewrite, error) {
	if !sc.request {
		return hostRewrite{}, fmt.Errorf("name: Host can only be set on requests")
	}
	if name, ok := hostFromHeader(value); ok {
		if !sc.hostFromHeader {
			return hostRewrite{}, fmt.Errorf("value: %q takes the host from a request header, which Envoy supports on a route's requestHeadersPolicy only, not on a service's", value)
		}
		return hostRewrite{header: name}, nil
	}
	if strings.Contains(value, "%") {
		return hostRewrite{}, fmt.Errorf("value: %q is neither a host name nor %%REQ(header-name)%%", value)
	}
	return hostRewrite{literal: value}, nil
}
