package dag

import (
	"fmt"
	"sort"
	"strings"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// parseHeadersPolicy validates a headers policy. On request policies, a
// "Host" entry in set becomes a host rewrite (Envoy rewrites the authority
// instead of adding a second Host header), returned separately.
func parseHeadersPolicy(hp *switchyardv1.HeadersPolicy, request bool) (*HeadersPolicy, string, error) {
	if hp == nil {
		return nil, "", nil
	}
	out := &HeadersPolicy{}
	hostRewrite := ""
	seen := map[string]bool{}
	for i, h := range hp.Set {
		if err := validateHeaderName(h.Name); err != nil {
			return nil, "", fmt.Errorf("set[%d].name: %v", i, err)
		}
		if err := validateHeaderValue(h.Value); err != nil {
			return nil, "", fmt.Errorf("set[%d].value: %v", i, err)
		}
		key := strings.ToLower(h.Name)
		if seen[key] {
			return nil, "", fmt.Errorf("set[%d].name: header %q is set twice", i, h.Name)
		}
		seen[key] = true
		if key == "host" {
			if !request {
				return nil, "", fmt.Errorf("set[%d].name: Host can only be set on requests", i)
			}
			hostRewrite = h.Value
			continue
		}
		out.Set = append(out.Set, HeaderValue{Name: key, Value: h.Value})
	}
	for i, name := range hp.Remove {
		if err := validateHeaderName(name); err != nil {
			return nil, "", fmt.Errorf("remove[%d]: %v", i, err)
		}
		if strings.EqualFold(name, "host") {
			return nil, "", fmt.Errorf("remove[%d]: the Host header cannot be removed", i)
		}
		out.Remove = append(out.Remove, strings.ToLower(name))
	}
	sort.Slice(out.Set, func(i, j int) bool { return out.Set[i].Name < out.Set[j].Name })
	sort.Strings(out.Remove)
	if len(out.Set) == 0 && len(out.Remove) == 0 {
		return nil, hostRewrite, nil
	}
	return out, hostRewrite, nil
}
