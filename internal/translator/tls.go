package translator

import (
	"cmp"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_filter_network_http_connection_manager_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
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
	switch {
	case svh.ClientAuth != nil:
		clientAuth(ctx, svh)
	case svh.ClientCA != nil:
		ctx.CommonTlsContext.ValidationContextType = &envoy_transport_socket_tls_v3.CommonTlsContext_ValidationContextSdsSecretConfig{
			ValidationContextSdsSecretConfig: sdsSecret(svh.ClientCA.Name),
		}
		ctx.RequireClientCertificate = boolValue(true)
	}
	return tlsTransportSocket(ctx)
}

// clientAuth sets the client certificate options beyond a plain CA. They
// live in a static validation context, which Envoy merges with the CA's
// from SDS when there is one (combined_validation_context); the
// revocation lists are public, so they travel inline.
func clientAuth(ctx *envoy_transport_socket_tls_v3.DownstreamTlsContext, svh *dag.SecureVirtualHost) {
	a := svh.ClientAuth
	vc := &envoy_transport_socket_tls_v3.CertificateValidationContext{OnlyVerifyLeafCertCrl: a.CRLLeafOnly}
	if a.SkipVerify {
		vc.TrustChainVerification = envoy_transport_socket_tls_v3.CertificateValidationContext_ACCEPT_UNTRUSTED
	}
	if a.CRL != nil {
		vc.Crl = inlineBytes(a.CRL)
	}
	if svh.ClientCA != nil {
		ctx.CommonTlsContext.ValidationContextType = &envoy_transport_socket_tls_v3.CommonTlsContext_CombinedValidationContext{
			CombinedValidationContext: &envoy_transport_socket_tls_v3.CommonTlsContext_CombinedCertificateValidationContext{
				DefaultValidationContext:         vc,
				ValidationContextSdsSecretConfig: sdsSecret(svh.ClientCA.Name),
			},
		}
	} else {
		ctx.CommonTlsContext.ValidationContextType = &envoy_transport_socket_tls_v3.CommonTlsContext_ValidationContext{ValidationContext: vc}
	}
	ctx.RequireClientCertificate = boolValue(!a.Optional)
}

// upstreamTLSSocket originates TLS to a cluster's backends. With
// UpstreamTLS set, the backend certificate must chain to the CA Secret and
// carry SubjectName as a DNS SAN. Both checks are needed and they live in
// different places: the CA comes over SDS, so the SAN matcher goes in the
// default_validation_context of a combined validation context, which Envoy
// merges with the SDS one (validation_context_type is a oneof, so the SDS
// config cannot be set next to a plain validation context).
func upstreamTLSSocket(spec *dag.ClusterSpec) *envoy_config_core_v3.TransportSocket {
	return tlsTransportSocket(upstreamTLSContext(spec))
}

// upstreamTLSContext is the UpstreamTlsContext of upstreamTLSSocket.
func upstreamTLSContext(spec *dag.ClusterSpec) *envoy_transport_socket_tls_v3.UpstreamTlsContext {
	common := &envoy_transport_socket_tls_v3.CommonTlsContext{}
	if spec.Protocol == "h2" {
		common.AlpnProtocols = []string{"h2"}
	}
	// spec.SNI, the server name an ExternalName backend expects, wins over
	// the subjectName, which is then only what its certificate must carry.
	ctx := &envoy_transport_socket_tls_v3.UpstreamTlsContext{CommonTlsContext: common, Sni: spec.SNI}
	if spec.ClientCertificate != "" {
		common.TlsCertificateSdsSecretConfigs = []*envoy_transport_socket_tls_v3.SdsSecretConfig{sdsSecret(spec.ClientCertificate)}
	}
	if tls := spec.UpstreamTLS; tls != nil {
		ctx.Sni = cmp.Or(spec.SNI, tls.SubjectName)
		names := tls.SubjectNames
		if len(names) == 0 && tls.SubjectName != "" {
			names = []string{tls.SubjectName}
		}
		// Envoy accepts a certificate that matches any one of the matchers.
		var sans []*envoy_transport_socket_tls_v3.SubjectAltNameMatcher
		for _, n := range names {
			sans = append(sans, &envoy_transport_socket_tls_v3.SubjectAltNameMatcher{
				SanType: envoy_transport_socket_tls_v3.SubjectAltNameMatcher_DNS,
				Matcher: &envoy_type_matcher_v3.StringMatcher{
					MatchPattern: &envoy_type_matcher_v3.StringMatcher_Exact{Exact: n},
				},
			})
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
	return ctx
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

// forwardClientCert has the HCM replace any x-forwarded-client-cert a
// client sent with the details of its verified certificate.
func forwardClientCert(hcm *envoy_filter_network_http_connection_manager_v3.HttpConnectionManager, a *dag.ClientAuth) {
	if a == nil || a.Forward == nil {
		return
	}
	f := a.Forward
	hcm.ForwardClientCertDetails = envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_SANITIZE_SET
	hcm.SetCurrentClientCertDetails = &envoy_filter_network_http_connection_manager_v3.HttpConnectionManager_SetCurrentClientCertDetails{
		Subject: boolValue(f.Subject),
		Cert:    f.Cert,
		Chain:   f.Chain,
		Dns:     f.DNS,
		Uri:     f.URI,
	}
}
