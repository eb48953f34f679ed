package translator

import (
	"testing"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

func TestSecret(t *testing.T) {
	inline := func(b string) *envoy_config_core_v3.DataSource {
		return &envoy_config_core_v3.DataSource{Specifier: &envoy_config_core_v3.DataSource_InlineBytes{InlineBytes: []byte(b)}}
	}
	tests := map[string]struct {
		in   *dag.Secret
		want *envoy_transport_socket_tls_v3.Secret
	}{
		"certificate and key": {
			in: &dag.Secret{Name: "ns/cert", Kind: dag.SecretTLS, Cert: []byte("CERT"), Key: []byte("KEY")},
			want: &envoy_transport_socket_tls_v3.Secret{
				Name: "ns/cert",
				Type: &envoy_transport_socket_tls_v3.Secret_TlsCertificate{TlsCertificate: &envoy_transport_socket_tls_v3.TlsCertificate{
					CertificateChain: inline("CERT"),
					PrivateKey:       inline("KEY"),
				}},
			},
		},
		"CA bundle": {
			in: &dag.Secret{Name: "ns/cert/ca", Kind: dag.SecretCA, Cert: []byte("CA")},
			want: &envoy_transport_socket_tls_v3.Secret{
				Name: "ns/cert/ca",
				Type: &envoy_transport_socket_tls_v3.Secret_ValidationContext{ValidationContext: &envoy_transport_socket_tls_v3.CertificateValidationContext{
					TrustedCa: inline("CA"),
				}},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Secret(tc.in)
			if d := diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			validateAll(t, &Resources{Secrets: []*envoy_transport_socket_tls_v3.Secret{got}})
		})
	}
}
