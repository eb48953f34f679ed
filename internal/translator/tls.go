package translator

import (
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	envoy_type_matcher_v3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// downstreamTLSSocket terminates TLS for one secure virtual host. The
// certificate and the client CA come over SDS by name, so a certificate
// rotation pushes one Secret instead of a new listener, which would drain
// every connection on it.
func downstreamTLSSocket(svh *dag.SecureVirtualHost, alpn []string) *envoy_config_core_v3.TransportSocket {
	ctx := &envoy_transport_socket_tls_v3.DownstreamTlsContext{
		CommonTlsContext: &envoy_transport_socket_tls_v3.CommonTlsContext{
			TlsParams: &envoy_transport_socket_tls_v3.TlsParameters{
				TlsMinimumProtocolVersion: tlsVersion(svh.MinTLSVersion, envoy_transport_socket_tls_v3.TlsParameters_TLSv1_2),
				TlsMaximumProtocolVersion: tlsVersion(svh.MaxTLSVersion, envoy_transport_socket_tls_v3.TlsParameters_TLSv1_3),
			},
			TlsCertificateSdsSecretConfigs: []*envoy_transport_socket_tls_v3.SdsSecretConfig{sdsSecret(svh.Secret.Name)},
			AlpnProtocols:                  alpn,
		},
	}
	if svh.ClientCA != nil {
		ctx.CommonTlsContext.ValidationContextType = &envoy_transport_socket_tls_v3.CommonTlsContext_ValidationContextSdsSecretConfig{
			ValidationContextSdsSecretConfig: sdsSecret(svh.ClientCA.Name),
		}
		ctx.RequireClientCertificate = boolValue(true)
	}
	return tlsTransportSocket(ctx)
}

// upstreamTLSSocket originates TLS to a cluster's backends. With
// UpstreamTLS set, the backend certificate must chain to the CA Secret and
// carry SubjectName as a DNS SAN. Both checks are needed and they live in
// different places: the CA comes over SDS, so the SAN matcher goes in the
// default_validation_context of a combined validation context, which Envoy
// merges with the SDS one (validation_context_type is a oneof, so the SDS
// config cannot be set next to a plain validation context).
func upstreamTLSSocket(spec *dag.ClusterSpec) *envoy_config_core_v3.TransportSocket {
	common := &envoy_transport_socket_tls_v3.CommonTlsContext{}
	if spec.Protocol == "h2" {
		common.AlpnProtocols = []string{"h2"}
	}
	ctx := &envoy_transport_socket_tls_v3.UpstreamTlsContext{CommonTlsContext: common}
	if spec.ClientCertificate != "" {
		common.TlsCertificateSdsSecretConfigs = []*envoy_transport_socket_tls_v3.SdsSecretConfig{sdsSecret(spec.ClientCertificate)}
	}
	if tls := spec.UpstreamTLS; tls != nil {
		ctx.Sni = tls.SubjectName
		var sans []*envoy_transport_socket_tls_v3.SubjectAltNameMatcher
		if tls.SubjectName != "" {
			sans = []*envoy_transport_socket_tls_v3.SubjectAltNameMatcher{{
				SanType: envoy_transport_socket_tls_v3.SubjectAltNameMatcher_DNS,
				Matcher: &envoy_type_matcher_v3.StringMatcher{
					MatchPattern: &envoy_type_matcher_v3.StringMatcher_Exact{Exact: tls.SubjectName},
				},
			}}
		}
		if tls.CASecret != "" {
			common.ValidationContextType = &envoy_transport_socket_tls_v3.CommonTlsContext_CombinedValidationContext{
				CombinedValidationContext: &envoy_transport_socket_tls_v3.CommonTlsContext_CombinedCertificateValidationContext{
					DefaultValidationContext:         &envoy_transport_socket_tls_v3.CertificateValidationContext{MatchTypedSubjectAltNames: sans},
					ValidationContextSdsSecretConfig: sdsSecret(tls.CASecret),
				},
			}
		} else if sans != nil {
			common.ValidationContextType = &envoy_transport_socket_tls_v3.CommonTlsContext_ValidationContext{
				ValidationContext: &envoy_transport_socket_tls_v3.CertificateValidationContext{MatchTypedSubjectAltNames: sans},
			}
		}
	}
	return tlsTransportSocket(ctx)
}

func tlsTransportSocket(ctx proto.Message) *envoy_config_core_v3.TransportSocket {
	return &envoy_config_core_v3.TransportSocket{
		Name:       transportSocketTLS,
		ConfigType: &envoy_config_core_v3.TransportSocket_TypedConfig{TypedConfig: toAny(ctx)},
	}
}

// sdsSecret references a Secret resource served over ADS.
func sdsSecret(name string) *envoy_transport_socket_tls_v3.SdsSecretConfig {
	return &envoy_transport_socket_tls_v3.SdsSecretConfig{Name: name, SdsConfig: adsConfigSource()}
}

// tlsVersion maps the DAG's "1.2"/"1.3" to Envoy's enum; anything else
// (the DAG validates, so only "") takes the default.
func tlsVersion(v string, def envoy_transport_socket_tls_v3.TlsParameters_TlsProtocol) envoy_transport_socket_tls_v3.TlsParameters_TlsProtocol {
	switch v {
	case "1.2":
		return envoy_transport_socket_tls_v3.TlsParameters_TLSv1_2
	case "1.3":
		return envoy_transport_socket_tls_v3.TlsParameters_TLSv1_3
	default:
		return def
	}
}
