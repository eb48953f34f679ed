package translator

import (
	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_filter_http_jwt_authn_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// JWKSClusterName is the cluster that fetches one provider's key set. It
// belongs to its virtual host alone, so that the host's resources come
// and go together even when two hosts name the same JWKS.
func JWKSClusterName(fqdn, provider string) string {
	return "jwks/" + fqdn + "/" + provider
}

// jwtFilter verifies the tokens of a secure virtual host. Each provider
// is also a requirement of the same name, which routes select with
// PerRouteConfig (see jwtPerRoute); the filter itself verifies nothing.
func jwtFilter(svh *dag.SecureVirtualHost) *envoy_filter_network_http_connection_manager_v3.HttpFilter {
	cfg := &envoy_filter_http_jwt_authn_v3.JwtAuthentication{
		Providers:      map[string]*envoy_filter_http_jwt_authn_v3.JwtProvider{},
		RequirementMap: map[string]*envoy_filter_http_jwt_authn_v3.JwtRequirement{},
	}
	for _, p := range svh.JWT.Providers {
		jwks := &envoy_filter_http_jwt_authn_v3.RemoteJwks{
			HttpUri: &envoy_config_core_v3.HttpUri{
				Uri:              p.JWKS.URI,
				HttpUpstreamType: &envoy_config_core_v3.HttpUri_Cluster{Cluster: JWKSClusterName(svh.FQDN, p.Name)},
				Timeout:          duration(p.JWKS.Timeout),
			},
		}
		if d := p.JWKS.CacheDuration; d != nil {
			jwks.CacheDuration = duration(*d)
		}
		cfg.Providers[p.Name] = &envoy_filter_http_jwt_authn_v3.JwtProvider{
			Issuer:              p.Issuer,
			Audiences:           p.Audiences,
			Forward:             p.Forward,
			JwksSourceSpecifier: &envoy_filter_http_jwt_authn_v3.JwtProvider_RemoteJwks{RemoteJwks: jwks},
		}
		cfg.RequirementMap[p.Name] = &envoy_filter_http_jwt_authn_v3.JwtRequirement{
			RequiresType: &envoy_filter_http_jwt_authn_v3.JwtRequirement_ProviderName{ProviderName: p.Name},
		}
	}
	return httpFilter(filterJWTAuthn, cfg)
}

// jwtPerRoute is a route's choice on a host with JWT providers: its
// provider's requirement, or verification disabled. Every such route gets
// one, so that none depends on what Envoy does without.
func jwtPerRoute(r *dag.Route) *anypb.Any {
	cfg := &envoy_filter_http_jwt_authn_v3.PerRouteConfig{
		RequirementSpecifier: &envoy_filter_http_jwt_authn_v3.PerRouteConfig_Disabled{Disabled: true},
	}
	if r.JWTProvider != "" {
		cfg.RequirementSpecifier = &envoy_filter_http_jwt_authn_v3.PerRouteConfig_RequirementName{RequirementName: r.JWTProvider}
	}
	return toAny(cfg)
}

// JWKSClusters returns the clusters of a secure host's key sets: each
// resolves the JWKS host by DNS (STRICT_DNS, so every address is used,
// with the resolvers and refresh rate of the options),
// and speaks TLS with the host as SNI for an https URI, verifying the
// server when the provider says how.
func JWKSClusters(svh *dag.SecureVirtualHost, opts Options) []*envoy_config_cluster_v3.Cluster {
	if svh.JWT == nil {
		return nil
	}
	out := make([]*envoy_config_cluster_v3.Cluster, 0, len(svh.JWT.Providers))
	for _, p := range svh.JWT.Providers {
		name := JWKSClusterName(svh.FQDN, p.Name)
		c := &envoy_config_cluster_v3.Cluster{
			Name:                 name,
			ClusterDiscoveryType: &envoy_config_cluster_v3.Cluster_Type{Type: envoy_config_cluster_v3.Cluster_STRICT_DNS},
			DnsLookupFamily:      dnsLookupFamily(p.JWKS.DNSLookupFamily),
			LoadAssignment: &envoy_config_endpoint_v3.ClusterLoadAssignment{
				ClusterName: name,
				Endpoints: []*envoy_config_endpoint_v3.LocalityLbEndpoints{{
					LbEndpoints: []*envoy_config_endpoint_v3.LbEndpoint{{
						HostIdentifier: &envoy_config_endpoint_v3.LbEndpoint_Endpoint{Endpoint: &envoy_config_endpoint_v3.Endpoint{
							Address: socketAddress(p.JWKS.Host, p.JWKS.Port),
						}},
					}},
				}},
			},
		}
		if opts.ConnectTimeout > 0 {
			c.ConnectTimeout = duration(opts.ConnectTimeout)
		}
		setDNSResolution(c, opts)
		if p.JWKS.TLS {
			spec := &dag.ClusterSpec{Protocol: "tls"}
			if p.JWKS.CA != nil {
				spec.UpstreamTLS = &dag.UpstreamTLS{CASecret: p.JWKS.CA.Name, SubjectName: p.JWKS.SubjectName}
			}
			ctx := upstreamTLSContext(spec)
			ctx.Sni = p.JWKS.Host
			c.TransportSocket = tlsTransportSocket(ctx)
		}
		out = append(out, c)
	}
	return out
}

func dnsLookupFamily(f string) envoy_config_cluster_v3.Cluster_DnsLookupFamily {
	switch f {
	case "v4":
		return envoy_config_cluster_v3.Cluster_V4_ONLY
	case "v6":
		return envoy_config_cluster_v3.Cluster_V6_ONLY
	case "all":
		return envoy_config_cluster_v3.Cluster_ALL
	}
	return envoy_config_cluster_v3.Cluster_AUTO
}
