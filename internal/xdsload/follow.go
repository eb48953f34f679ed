package xdsload

import (
	"fmt"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

const (
	typeListener = resource.ListenerType
	typeRoute    = resource.RouteType
	typeCluster  = resource.ClusterType
	typeEndpoint = resource.EndpointType
)

// followOrder is the order a client subscribes in, what a resource names
// before what names it.
var followOrder = []string{typeRoute, typeCluster, typeEndpoint}

// references decodes a resource and returns the names it makes a gRPC
// client subscribe to, by type URL: a listener's route configuration, a
// route configuration's clusters, a cluster's load assignment.
func references(typeURL string, a *anypb.Any) (map[string][]string, error) {
	switch typeURL {
	case typeListener:
		var l envoy_config_listener_v3.Listener
		if err := a.UnmarshalTo(&l); err != nil {
			return nil, err
		}
		var hcm envoy_filter_network_http_connection_manager_v3.HttpConnectionManager
		if err := l.GetApiListener().GetApiListener().UnmarshalTo(&hcm); err != nil {
			return nil, fmt.Errorf("not an API listener: %w", err)
		}
		if name := hcm.GetRds().GetRouteConfigName(); name != "" {
			return map[string][]string{typeRoute: {name}}, nil
		}
	case typeRoute:
		var rc envoy_config_route_v3.RouteConfiguration
		if err := a.UnmarshalTo(&rc); err != nil {
			return nil, err
		}
		var clusters []string
		for _, vh := range rc.GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				if c := r.GetRoute().GetCluster(); c != "" {
					clusters = append(clusters, c)
				}
				for _, w := range r.GetRoute().GetWeightedClusters().GetClusters() {
					clusters = append(clusters, w.GetName())
				}
			}
		}
		return map[string][]string{typeCluster: clusters}, nil
	case typeCluster:
		var c envoy_config_cluster_v3.Cluster
		if err := a.UnmarshalTo(&c); err != nil {
			return nil, err
		}
		name := c.GetEdsClusterConfig().GetServiceName()
		if name == "" {
			name = c.GetName()
		}
		return map[string][]string{typeEndpoint: {name}}, nil
	}
	return nil, nil
}
