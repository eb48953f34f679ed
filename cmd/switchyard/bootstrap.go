package main

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	"sigs.k8s.io/yaml"

	envoy_config_bootstrap_v3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	envoy_config_overload_v3 "github.com/envoyproxy/go-control-plane/envoy/config/overload/v3"
	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	envoy_filter_http_router_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envoy_resource_monitor_downstream_connections_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/resource_monitors/downstream_connections/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	envoy_upstream_http_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"

	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// bootstrapOptions are the flags of `switchyard bootstrap`.
type bootstrapOptions struct {
	xdsAddress     string
	xdsAPI         string
	group          string
	nodeID         string
	nodeCluster    string
	gateway        string
	adminAddress   string
	adminPort      uint32
	healthPort     uint32
	maxConnections int64
	tlsCert        string
	tlsKey         string
	tlsCA          string
	tlsServerName  string
	out            string
	format         string
}

// Names of the clusters the bootstrap defines itself.
const (
	xdsClusterName   = "switchyard"
	adminClusterName = "envoy-admin"
)

func init() { moreCommands = append(moreCommands, newBootstrapCommand) }

func newBootstrapCommand() *cobra.Command {
	o := bootstrapOptions{
		xdsAddress:     "127.0.0.1:8001",
		xdsAPI:         "delta",
		group:          string(xdsres.GroupEnvoy),
		nodeCluster:    "switchyard-envoy",
		adminAddress:   "127.0.0.1",
		adminPort:      9001,
		healthPort:     8002,
		maxConnections: 100000,
		out:            "-",
	}
	cmd := &cobra.Command{
		Use:   "bootstrap [--xds-address HOST:PORT] [--out FILE]",
		Short: "Print an Envoy bootstrap that gets everything else from this control plane",
		Long: `bootstrap prints the configuration Envoy starts with: its node id and
the metadata switchyard.dev/group: envoy (so serve sends it the Envoy
resources), one ADS stream over gRPC to the control plane for listeners
and clusters (and through them routes, endpoints and secrets), the admin
interface on localhost, and a health listener that exposes only /ready
and /stats/prometheus of the admin interface to probes and scrapers.

With --gateway NAME the node also carries switchyard.dev/gateway: NAME,
and serve (started with --gateways NAME) sends it only the HTTPProxies
whose spec.ingressClassName is NAME; see site/gateways.md.

With --xds-tls-ca Envoy verifies the control plane's certificate (against
--xds-tls-server-name); with --xds-tls-cert and --xds-tls-key as well it
presents its own, for mutual TLS. The files are read by Envoy, not here.

In Kubernetes an init container runs it into a volume Envoy reads; see
examples/deploy.`,
		Example: `  # Envoy on this machine, against 'switchyard serve':
  switchyard bootstrap --out envoy.json && envoy -c envoy.json

  # In a pod, with mutual TLS to the control plane:
  switchyard bootstrap --xds-address switchyard.switchyard-system.svc:8001 \
    --xds-tls-cert /certs/tls.crt --xds-tls-key /certs/tls.key --xds-tls-ca /certs/ca.crt \
    --out /config/envoy.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.nodeID == "" {
				o.nodeID = defaultNodeID()
			}
			bs, err := o.bootstrap()
			if err != nil {
				return usageError("%v", err)
			}
			b, err := encodeBootstrap(bs, o.outputFormat())
			if err != nil {
				return usageError("%v", err)
			}
			if o.out == "-" {
				_, err = cmd.OutOrStdout().Write(b)
			} else {
				err = writeFileAtomic(o.out, b)
			}
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.xdsAddress, "xds-address", o.xdsAddress, "HOST:PORT of the control plane's xDS server (a DNS name is resolved by Envoy)")
	f.StringVar(&o.xdsAPI, "xds-api", o.xdsAPI, "delta (incremental, the default: an endpoint change sends one load assignment) or sotw (state of the world) ADS")
	f.StringVar(&o.group, "group", o.group, "consumer group Envoy joins: envoy (the ingress) or mesh (a node proxy of the mesh, see site/mesh.md)")
	f.StringVar(&o.nodeID, "node-id", "", "Envoy's node id (default: $POD_NAME, else the host name)")
	f.StringVar(&o.nodeCluster, "node-cluster", o.nodeCluster, "Envoy's node cluster, the prefix of its stats")
	f.StringVar(&o.gateway, "gateway", "", "gateway this Envoy is, sent as node metadata switchyard.dev/gateway: it receives only the HTTPProxies whose spec.ingressClassName is this (empty: the default gateway)")
	f.StringVar(&o.adminAddress, "admin-address", o.adminAddress, "address of Envoy's admin interface; keep it on loopback")
	f.Uint32Var(&o.adminPort, "admin-port", o.adminPort, "port of Envoy's admin interface")
	f.Uint32Var(&o.healthPort, "health-port", o.healthPort, "port of the health listener (/ready, /stats/prometheus) on all addresses; 0 for none")
	f.Int64Var(&o.maxConnections, "max-connections", o.maxConnections, "most downstream connections Envoy accepts in all; 0 for no limit")
	f.StringVar(&o.tlsCert, "xds-tls-cert", "", "PEM client certificate Envoy presents to the control plane (needs --xds-tls-key and --xds-tls-ca)")
	f.StringVar(&o.tlsKey, "xds-tls-key", "", "PEM private key of --xds-tls-cert")
	f.StringVar(&o.tlsCA, "xds-tls-ca", "", "PEM CA bundle the control plane's certificate must be signed by; turns TLS on")
	f.StringVar(&o.tlsServerName, "xds-tls-server-name", "", "name the control plane's certificate must carry, also sent as SNI (default: the host of --xds-address)")
	f.StringVar(&o.out, "out", o.out, `file to write ("-" for standard output); written atomically, so Envoy never reads half of it`)
	f.StringVar(&o.format, "format", "", "json or yaml (default: from the --out extension, else json)")
	return cmd
}

func defaultNodeID() string {
	if n := os.Getenv("POD_NAME"); n != "" {
		return n
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "envoy"
}

func (o bootstrapOptions) outputFormat() string {
	if o.format != "" {
		return o.format
	}
	if ext := strings.ToLower(filepath.Ext(o.out)); ext == ".yaml" || ext == ".yml" {
		return "yaml"
	}
	return "json"
}

// bootstrap builds the Bootstrap proto.
func (o bootstrapOptions) bootstrap() (*envoy_config_bootstrap_v3.Bootstrap, error) {
	host, port, err := splitHostPort(o.xdsAddress)
	if err != nil {
		return nil, fmt.Errorf("--xds-address: %v", err)
	}
	apiType := envoy_config_core_v3.ApiConfigSource_GRPC
	if o.group != string(xdsres.GroupEnvoy) && o.group != string(xdsres.GroupMesh) {
		return nil, fmt.Errorf("--group %q: use envoy or mesh", o.group)
	}
	switch o.xdsAPI {
	case "sotw":
	case "delta":
		apiType = envoy_config_core_v3.ApiConfigSource_DELTA_GRPC
	default:
		return nil, fmt.Errorf("--xds-api %q: use sotw or delta", o.xdsAPI)
	}
	xds, err := o.xdsCluster(host, port)
	if err != nil {
		return nil, err
	}
	ads := &envoy_config_core_v3.ConfigSource{
		ResourceApiVersion:    envoy_config_core_v3.ApiVersion_V3,
		ConfigSourceSpecifier: &envoy_config_core_v3.ConfigSource_Ads{Ads: &envoy_config_core_v3.AggregatedConfigSource{}},
	}
	bs := &envoy_config_bootstrap_v3.Bootstrap{
		Node: &envoy_config_core_v3.Node{
			Id:       o.nodeID,
			Cluster:  o.nodeCluster,
			Metadata: o.nodeMetadata(),
		},
		Admin: &envoy_config_bootstrap_v3.Admin{Address: socketAddress(o.adminAddress, o.adminPort)},
		DynamicResources: &envoy_config_bootstrap_v3.Bootstrap_DynamicResources{
			AdsConfig: &envoy_config_core_v3.ApiConfigSource{
				ApiType:                   apiType,
				TransportApiVersion:       envoy_config_core_v3.ApiVersion_V3,
				SetNodeOnFirstMessageOnly: true,
				GrpcServices: []*envoy_config_core_v3.GrpcService{{
					TargetSpecifier: &envoy_config_core_v3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &envoy_config_core_v3.GrpcService_EnvoyGrpc{ClusterName: xdsClusterName}},
				}},
			},
			LdsConfig: ads,
			CdsConfig: ads,
		},
		StaticResources: &envoy_config_bootstrap_v3.Bootstrap_StaticResources{
			Clusters: []*envoy_config_cluster_v3.Cluster{xds},
		},
	}
	if o.healthPort != 0 {
		l, err := healthListener(o.healthPort)
		if err != nil {
			return nil, err
		}
		bs.StaticResources.Listeners = append(bs.StaticResources.Listeners, l)
		bs.StaticResources.Clusters = append(bs.StaticResources.Clusters,
			staticCluster(adminClusterName, o.adminAddress, o.adminPort, envoy_config_cluster_v3.Cluster_STATIC))
	}
	if o.maxConnections > 0 {
		om, err := overloadManager(o.maxConnections)
		if err != nil {
			return nil, err
		}
		bs.OverloadManager = om
	}
	return bs, nil
}

// xdsCluster is the control plane: HTTP/2 with keepalives, so that a dead
// connection is noticed, and TLS when configured.
func (o bootstrapOptions) xdsCluster(host string, port uint32) (*envoy_config_cluster_v3.Cluster, error) {
	typ := envoy_config_cluster_v3.Cluster_STRICT_DNS
	if _, err := netip.ParseAddr(host); err == nil {
		typ = envoy_config_cluster_v3.Cluster_STATIC
	}
	c := staticCluster(xdsClusterName, host, port, typ)
	h2, err := anypb.New(&envoy_upstream_http_v3.HttpProtocolOptions{
		UpstreamProtocolOptions: &envoy_upstream_http_v3.HttpProtocolOptions_ExplicitHttpConfig_{
			ExplicitHttpConfig: &envoy_upstream_http_v3.HttpProtocolOptions_ExplicitHttpConfig{
				ProtocolConfig: &envoy_upstream_http_v3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
					Http2ProtocolOptions: &envoy_config_core_v3.Http2ProtocolOptions{
						ConnectionKeepalive: &envoy_config_core_v3.KeepaliveSettings{
							Interval: durationpb.New(30 * time.Second),
							Timeout:  durationpb.New(10 * time.Second),
						},
					},
				},
			},
		},
	})
	if err != nil {
		return nil, err
	}
	c.TypedExtensionProtocolOptions = map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": h2}
	c.UpstreamConnectionOptions = &envoy_config_cluster_v3.UpstreamConnectionOptions{TcpKeepalive: &envoy_config_core_v3.TcpKeepalive{}}
	ts, err := o.xdsTLS(host)
	if err != nil {
		return nil, err
	}
	c.TransportSocket = ts
	return c, nil
}

// xdsTLS is the transport socket to the control plane, nil for clear text.
func (o bootstrapOptions) xdsTLS(host string) (*envoy_config_core_v3.TransportSocket, error) {
	switch {
	case o.tlsCA == "" && o.tlsCert == "" && o.tlsKey == "":
		return nil, nil
	case o.tlsCA == "":
		return nil, fmt.Errorf("--xds-tls-cert and --xds-tls-key need --xds-tls-ca: Envoy must verify the control plane it sends its identity to")
	case (o.tlsCert == "") != (o.tlsKey == ""):
		return nil, fmt.Errorf("--xds-tls-cert and --xds-tls-key go together")
	}
	name := o.tlsServerName
	if name == "" {
		name = host
	}
	sanType := envoy_transport_socket_tls_v3.SubjectAltNameMatcher_DNS
	if _, err := netip.ParseAddr(name); err == nil {
		sanType = envoy_transport_socket_tls_v3.SubjectAltNameMatcher_IP_ADDRESS
	}
	common := &envoy_transport_socket_tls_v3.CommonTlsContext{
		AlpnProtocols: []string{"h2"},
		ValidationContextType: &envoy_transport_socket_tls_v3.CommonTlsContext_ValidationContext{
			ValidationContext: &envoy_transport_socket_tls_v3.CertificateValidationContext{
				TrustedCa: fileSource(o.tlsCA),
				MatchTypedSubjectAltNames: []*envoy_transport_socket_tls_v3.SubjectAltNameMatcher{{
					SanType: sanType,
					Matcher: &envoy_type_matcher_v3.StringMatcher{MatchPattern: &envoy_type_matcher_v3.StringMatcher_Exact{Exact: name}},
				}},
			},
		},
	}
	if o.tlsCert != "" {
		common.TlsCertificates = []*envoy_transport_socket_tls_v3.TlsCertificate{{
			CertificateChain: fileSource(o.tlsCert),
			PrivateKey:       fileSource(o.tlsKey),
		}}
	}
	ctx := &envoy_transport_socket_tls_v3.UpstreamTlsContext{CommonTlsContext: common}
	if sanType == envoy_transport_socket_tls_v3.SubjectAltNameMatcher_DNS {
		ctx.Sni = name
	}
	a, err := anypb.New(ctx)
	if err != nil {
		return nil, err
	}
	return &envoy_config_core_v3.TransportSocket{
		Name:       "envoy.transport_sockets.tls",
		ConfigType: &envoy_config_core_v3.TransportSocket_TypedConfig{TypedConfig: a},
	}, nil
}

// healthListener exposes the admin interface's /ready and
// /stats/prometheus, and nothing else of it, on every address.
func healthListener(port uint32) (*envoy_config_listener_v3.Listener, error) {
	toAdmin := func(m *envoy_config_route_v3.RouteMatch) *envoy_config_route_v3.Route {
		return &envoy_config_route_v3.Route{
			Match: m,
			Action: &envoy_config_route_v3.Route_Route{Route: &envoy_config_route_v3.RouteAction{
				ClusterSpecifier: &envoy_config_route_v3.RouteAction_Cluster{Cluster: adminClusterName},
			}},
		}
	}
	router, err := anypb.New(&envoy_filter_http_router_v3.Router{})
	if err != nil {
		return nil, err
	}
	hcm, err := anypb.New(&envoy_filter_network_http_connection_manager_v3.HttpConnectionManager{
		StatPrefix: "health",
		RouteSpecifier: &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_RouteConfig{
			RouteConfig: &envoy_config_route_v3.RouteConfiguration{
				Name: "health",
				VirtualHosts: []*envoy_config_route_v3.VirtualHost{{
					Name:    "health",
					Domains: []string{"*"},
					Routes: []*envoy_config_route_v3.Route{
						toAdmin(&envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Path{Path: "/ready"}}),
						toAdmin(&envoy_config_route_v3.RouteMatch{PathSpecifier: &envoy_config_route_v3.RouteMatch_Path{Path: "/stats/prometheus"}}),
					},
				}},
			},
		},
		HttpFilters: []*envoy_filter_network_http_connection_manager_v3.HttpFilter{{
			Name:       "envoy.filters.http.router",
			ConfigType: &envoy_filter_network_http_connection_manager_v3.HttpFilter_TypedConfig{TypedConfig: router},
		}},
	})
	if err != nil {
		return nil, err
	}
	return &envoy_config_listener_v3.Listener{
		Name:    "health",
		Address: socketAddress("0.0.0.0", port),
		FilterChains: []*envoy_config_listener_v3.FilterChain{{
			Filters: []*envoy_config_listener_v3.Filter{{
				Name:       "envoy.filters.network.http_connection_manager",
				ConfigType: &envoy_config_listener_v3.Filter_TypedConfig{TypedConfig: hcm},
			}},
		}},
	}, nil
}

// overloadManager caps the downstream connections of all listeners; Envoy
// warns at startup when nothing does.
func overloadManager(maxConns int64) (*envoy_config_overload_v3.OverloadManager, error) {
	cfg, err := anypb.New(&envoy_resource_monitor_downstream_connections_v3.DownstreamConnectionsConfig{MaxActiveDownstreamConnections: maxConns})
	if err != nil {
		return nil, err
	}
	return &envoy_config_overload_v3.OverloadManager{
		ResourceMonitors: []*envoy_config_overload_v3.ResourceMonitor{{
			Name:       "envoy.resource_monitors.global_downstream_max_connections",
			ConfigType: &envoy_config_overload_v3.ResourceMonitor_TypedConfig{TypedConfig: cfg},
		}},
	}, nil
}

func staticCluster(name, host string, port uint32, typ envoy_config_cluster_v3.Cluster_DiscoveryType) *envoy_config_cluster_v3.Cluster {
	return &envoy_config_cluster_v3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &envoy_config_cluster_v3.Cluster_Type{Type: typ},
		ConnectTimeout:       durationpb.New(5 * time.Second),
		LoadAssignment: &envoy_config_endpoint_v3.ClusterLoadAssignment{
			ClusterName: name,
			Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{{
				LbEndpoints: []*envoy_config_endpoint_v3.LbEndpoint{{
					HostIdentifier: &envoy_config_endpoint_v3.LbEndpoint_Endpoint{Endpoint: &envoy_config_endpoint_v3.Endpoint{
						Address: socketAddress(host, port),
					}},
					LoadBalancingWeight: wrapperspb.UInt32(1),
				}},
			}},
		},
	}
}

func socketAddress(host string, port uint32) *envoy_config_core_v3.Address {
	return &envoy_config_core_v3.Address{Address: &envoy_config_core_v3.Address_SocketAddress{SocketAddress: &envoy_config_core_v3.SocketAddress{
		Address:       host,
		PortSpecifier: &envoy_config_core_v3.SocketAddress_PortValue{PortValue: port},
	}}}
}

func fileSource(path string) *envoy_config_core_v3.DataSource {
	return &envoy_config_core_v3.DataSource{Specifier: &envoy_config_core_v3.DataSource_Filename{Filename: path}}
}

func splitHostPort(addr string) (string, uint32, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil || port == 0 || host == "" {
		return "", 0, fmt.Errorf("%q is not HOST:PORT", addr)
	}
	return host, uint32(port), nil
}

// encodeBootstrap validates bs with the protos' own rules and renders it.
func encodeBootstrap(bs *envoy_config_bootstrap_v3.Bootstrap, format string) ([]byte, error) {
	if err := bs.ValidateAll(); err != nil {
		return nil, fmt.Errorf("the bootstrap would not load: %v", err)
	}
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(bs)
	if err != nil {
		return nil, err
	}
	switch format {
	case "json":
		return append(b, '\n'), nil
	case "yaml":
		return yaml.JSONToYAML(b)
	}
	return nil, fmt.Errorf("--format %q: use json or yaml", format)
}

// writeFileAtomic writes through a temporary file in the same directory.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".bootstrap-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// nodeMetadata tells the control plane what this Envoy is: its consumer
// group, and the gateway it belongs to when it is not the default one.
func (o *bootstrapOptions) nodeMetadata() *structpb.Struct {
	md := &structpb.Struct{Fields: map[string]*structpb.Value{
		xdsres.GroupMetadataKey: structpb.NewStringValue(o.group),
	}}
	if o.gateway != "" {
		md.Fields[xdscache.GatewayMetadataKey] = structpb.NewStringValue(o.gateway)
	}
	return md
}
