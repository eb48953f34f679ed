package explain

import envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

// DescribeMatch prints a route's match in one line, in the words of the
// proto's fields, as explain's report does; the web console shows routes
// with it so both say the same thing.
func DescribeMatch(m *envoy_config_route_v3.RouteMatch) string { return describeMatch(m) }
