package translator

import (
	"strings"

	"google.golang.org/protobuf/types/known/wrapperspb"

	envoy_config_accesslog_v3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_access_logger_stream_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/stream/v3"
	envoy_filter_network_connection_limit_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/connection_limit/v3"
	envoy_filter_network_tcp_proxy_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

const filterConnectionLimit = "envoy.filters.network.connection_limit"

// tcpProxyFilters are the network filters of a TCP host's filter chain:
// the connection limit first, so that a connection over it is closed
// before it reaches the backend, then the proxy itself.
func tcpProxyFilters(tp *dag.TCPProxy) []*envoy_config_listener_v3.Filter {
	var out []*envoy_config_listener_v3.Filter
	if tp.MaxConnections > 0 {
		out = append(out, &envoy_config_listener_v3.Filter{
			Name: filterConnectionLimit,
			ConfigType: &envoy_config_listener_v3.Filter_TypedConfig{TypedConfig: toAny(&envoy_filter_network_connection_limit_v3.ConnectionLimit{
				StatPrefix:     HTTPSListenerName,
				MaxConnections: wrapperspb.UInt64(uint64(tp.MaxConnections)),
			})},
		})
	}
	cfg := &envoy_filter_network_tcp_proxy_v3.TcpProxy{
		StatPrefix:       HTTPSListenerName,
		ClusterSpecifier: &envoy_filter_network_tcp_proxy_v3.TcpProxy_Cluster{Cluster: tp.Cluster.Name},
		IdleTimeout:      optDuration(tp.IdleTimeout),
	}
	if tp.AccessLogFormat != "" {
		cfg.AccessLog = []*envoy_config_accesslog_v3.AccessLog{tcpAccessLog(tp.AccessLogFormat)}
	}
	return append(out, &envoy_config_listener_v3.Filter{
		Name:       filterTCPProxy,
		ConfigType: &envoy_config_listener_v3.Filter_TypedConfig{TypedConfig: toAny(cfg)},
	})
}

// tcpAccessLog logs each connection to stdout in the user's format. Envoy
// writes a text format as it is, so a missing final newline is added:
// without it every connection would land on one line.
func tcpAccessLog(format string) *envoy_config_accesslog_v3.AccessLog {
	if !strings.HasSuffix(format, "\n") {
		format += "\n"
	}
	logger := &envoy_access_logger_stream_v3.StdoutAccessLog{
		AccessLogFormat: &envoy_access_logger_stream_v3.StdoutAccessLog_LogFormat{LogFormat: &envoy_config_core_v3.SubstitutionFormatString{
			Format: &envoy_config_core_v3.SubstitutionFormatString_TextFormatSource{
				TextFormatSource: &envoy_config_core_v3.DataSource{Specifier: &envoy_config_core_v3.DataSource_InlineString{InlineString: format}},
			},
		}},
	}
	return &envoy_config_accesslog_v3.AccessLog{
		Name:       accessLoggerStdout,
		ConfigType: &envoy_config_accesslog_v3.AccessLog_TypedConfig{TypedConfig: toAny(logger)},
	}
}
