package translator

import (
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// Secret returns the SDS resource of a certificate or CA bundle. The PEM
// travels inline: Envoy gets it over the (TLS-protected) ADS stream and
// never needs the Kubernetes Secret mounted.
func Secret(s *dag.Secret) *envoy_transport_socket_tls_v3.Secret {
	out := &envoy_transport_socket_tls_v3.Secret{Name: s.Name}
	switch s.Kind {
	case dag.SecretCA:
		out.Type = &envoy_transport_socket_tls_v3.Secret_ValidationContext{
			ValidationContext: &envoy_transport_socket_tls_v3.CertificateValidationContext{
				TrustedCa: inlineBytes(s.Cert),
			},
		}
	default:
		out.Type = &envoy_transport_socket_tls_v3.Secret_TlsCertificate{
			TlsCertificate: &envoy_transport_socket_tls_v3.TlsCertificate{
				CertificateChain: inlineBytes(s.Cert),
				PrivateKey:       inlineBytes(s.Key),
			},
		}
	}
	return out
}

func inlineBytes(b []byte) *envoy_config_core_v3.DataSource {
	return &envoy_config_core_v3.DataSource{
		Specifier: &envoy_config_core_v3.DataSource_InlineBytes{InlineBytes: b},
	}
}
