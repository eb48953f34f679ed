package convert

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// knownAnnotations are the projectcontour.io/ annotations Switchyard reads
// under switchyard.dev/; the others are renamed all the same, with a
// warning, so the output shows what was there.
var knownAnnotations = map[string]bool{
	"upstream-protocol.h2": true, "upstream-protocol.h2c": true, "upstream-protocol.tls": true,
	"max-connections": true, "max-pending-requests": true, "max-requests": true, "max-retries": true,
	"per-host-max-connections": true,
}

// rewrite changes the fields whose name Switchyard shares with Contour but
// not the meaning, so that the converted object behaves as it did, and
// warns about each; for HTTPProxy only, the others have none.
func (c *converter) rewrite(kind string, spec *yaml.Node) {
	if kind != "HTTPProxy" {
		return
	}
	routes := value(spec, "routes")
	if routes == nil || routes.Kind != yaml.SequenceNode {
		return
	}
	for i, r := range routes.Content {
		path := fmt.Sprintf("spec.routes[%d]", i)
		c.prefixes(r, path)
		c.retryCount(r, path)
		c.timeouts(r, path)
		c.mirrors(r, path)
	}
}

// prefixes warns about prefix conditions that Switchyard matches at
// segment boundaries where Contour matches any string prefix.
func (c *converter) prefixes(route *yaml.Node, path string) {
	conds := value(route, "conditions")
	if conds == nil || conds.Kind != yaml.SequenceNode {
		return
	}
	for j, cond := range conds.Content {
		p := value(cond, "prefix")
		if p == nil || p.Value == "/" || strings.HasSuffix(p.Value, "/") {
			continue
		}
		c.warn(p, fmt.Sprintf("%s.conditions[%d].prefix", path, j), "%q matches at path segment boundaries in Switchyard (%s and %s/..., not %sx, which Contour matches); for Contour's string prefix write regex: %q", p.Value, p.Value, p.Value, p.Value, regexp.QuoteMeta(p.Value)+".*")
	}
}

// retryCount keeps Contour's "count: 0 means 1": in Switchyard 0 turns
// retries off.
func (c *converter) retryCount(route *yaml.Node, path string) {
	n := value(value(route, "retryPolicy"), "count")
	if n == nil || n.Value != "0" {
		return
	}
	n.Value = "1"
	c.warn(n, path+".retryPolicy.count", "0 means one retry in Contour and none in Switchyard; written as 1")
}

// timeouts keeps Contour's zero timeouts, which disable the timeout; in
// Switchyard that is "infinity" and a zero is rejected.
func (c *converter) timeouts(route *yaml.Node, path string) {
	for _, parent := range []string{"timeoutPolicy", "retryPolicy"} {
		p := value(route, parent)
		if p == nil || p.Kind != yaml.MappingNode {
			continue
		}
		for i := 1; i < len(p.Content); i += 2 {
			v := p.Content[i]
			if v.Kind == yaml.ScalarNode && isZeroDuration(v.Value) {
				field := path + "." + parent + "." + p.Content[i-1].Value
				v.Value = "infinity"
				c.warn(v, field, "a zero duration disables the timeout in Contour; Switchyard writes that as \"infinity\"")
			}
		}
	}
}

func isZeroDuration(s string) bool {
	s = strings.TrimRight(s, "hmsuµn")
	return s != "" && strings.Trim(s, "0.") == ""
}

// mirrors keeps Contour's unset mirror weight, which mirrors every
// request: Switchyard requires the percentage.
func (c *converter) mirrors(route *yaml.Node, path string) {
	svcs := value(route, "services")
	if svcs == nil || svcs.Kind != yaml.SequenceNode {
		return
	}
	for j, s := range svcs.Content {
		m := value(s, "mirror")
		if m == nil || m.Value != "true" || value(s, "weight") != nil {
			continue
		}
		s.Content = append(s.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "weight"},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "100"})
		c.warn(m, fmt.Sprintf("%s.services[%d].weight", path, j), "a mirror without a weight copies every request in Contour; Switchyard needs the percentage, written as 100")
	}
}

// ingressClass moves Contour's ingress class annotations of an HTTPProxy
// to spec.ingressClassName, the only form Switchyard reads.
func (c *converter) ingressClass(obj, spec *yaml.Node) {
	ann := value(value(obj, "metadata"), "annotations")
	if ann == nil || ann.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(ann.Content); i += 2 {
		k, v := ann.Content[i], ann.Content[i+1]
		if k.Value != contourGroup+"/ingress.class" && k.Value != "kubernetes.io/ingress.class" {
			continue
		}
		if spec != nil && value(spec, "ingressClassName") == nil {
			spec.Content = append([]*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: "ingressClassName"},
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: v.Value},
			}, spec.Content...)
		}
		c.warn(k, "metadata.annotations."+k.Value, "moved to spec.ingressClassName")
		ann.Content = append(ann.Content[:i], ann.Content[i+2:]...)
		i -= 2
	}
}
