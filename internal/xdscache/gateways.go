package xdscache

import (
	"fmt"
	"sort"
	"strings"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

// GatewayMetadataKey is the node metadata field that names the gateway a
// node belongs to (switchyard bootstrap --gateway). A gateway is a slice
// of the configuration: the HTTPProxies whose spec.ingressClassName is the
// gateway's name (site/gateways.md).
const GatewayMetadataKey = "switchyard.dev/gateway"

// GatewayOf returns the gateway a node names in its metadata, "" when it
// names none (the default gateway).
func GatewayOf(node *envoy_config_core_v3.Node) string {
	return node.GetMetadata().GetFields()[GatewayMetadataKey].GetStringValue()
}

// gateways are the caches of the gateways besides the default one, which
// is the Cache that holds them. Each has the same groups and types as the
// default, and its streams never see another gateway's resources: a node
// is routed to exactly one cache before any state is read.
type gateways struct {
	// defaultName is the name the default gateway also answers to, so that
	// a node may name it explicitly.
	defaultName string
	byName      map[string]*Cache
	// further is true for the cache of a further gateway.
	further bool
}

// SetDefaultGateway names the gateway this cache serves, so that a node
// naming it explicitly is served here like a node that names none.
func (c *Cache) SetDefaultGateway(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gw.defaultName = name
}

// AddGateway returns the cache of a further gateway, creating it on first
// use. Nodes whose metadata names the gateway are served from it, and
// from nothing else.
func (c *Cache) AddGateway(name string) *Cache {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gw.byName == nil {
		c.gw.byName = map[string]*Cache{}
	}
	if sub := c.gw.byName[name]; sub != nil {
		return sub
	}
	sub := New()
	// The gateway's own cache answers to its name, and to no other.
	sub.gw.defaultName = name
	sub.gw.further = true
	sub.dropped = c.dropped
	c.gw.byName[name] = sub
	return sub
}

// Gateway returns the cache serving the named gateway: this cache for ""
// and the default name, nil for a gateway that is not served.
func (c *Cache) Gateway(name string) *Cache {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gatewayLocked(name)
}

// Gateways lists the names of the further gateways, sorted.
func (c *Cache) Gateways() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gatewayNamesLocked()
}

func (c *Cache) gatewayNamesLocked() []string {
	out := make([]string, 0, len(c.gw.byName))
	for n := range c.gw.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (c *Cache) gatewayLocked(name string) *Cache {
	if name == "" || name == c.gw.defaultName {
		return c
	}
	return c.gw.byName[name]
}

// cacheFor routes a node to its gateway's cache. A node naming a gateway
// that is not served is refused rather than given the default gateway's
// resources: a typo in a bootstrap must not hand one load balancer
// another's listeners and secrets.
func (c *Cache) cacheFor(node *envoy_config_core_v3.Node) (*Cache, error) {
	name := GatewayOf(node)
	c.mu.Lock()
	defer c.mu.Unlock()
	if sub := c.gatewayLocked(name); sub != nil {
		return sub, nil
	}
	return nil, fmt.Errorf("xdscache: node %q names gateway %q, which this control plane does not serve", node.GetId(), name)
}

// LookupGateway returns the cache serving the named gateway, like
// Gateway, or for a gateway that is not served an error naming those
// that are: the admin endpoint answers a typo in ?gateway= with the
// choices rather than with the default gateway's resources.
func (c *Cache) LookupGateway(name string) (*Cache, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sub := c.gatewayLocked(name); sub != nil {
		return sub, nil
	}
	known := []string{fmt.Sprintf("%q (the default)", c.gw.defaultName)}
	for _, n := range c.gatewayNamesLocked() {
		known = append(known, fmt.Sprintf("%q", n))
	}
	return nil, fmt.Errorf("unknown gateway %q: this control plane serves %s", name, strings.Join(known, ", "))
}

// DefaultGateway returns the name of the gateway this cache serves to
// nodes that name none ("" for the proxies without an ingress class).
func (c *Cache) DefaultGateway() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gw.defaultName
}
