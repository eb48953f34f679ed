package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"sigs.k8s.io/yaml"

	envoy_config_bootstrap_v3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_transport_socket_tls_v3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
)

// runCommand runs the switchyard command line and returns its output.
func runCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// loadBootstrap parses a bootstrap as Envoy would and checks it, and every
// typed config nested in it, with the protos' own validation rules.
func loadBootstrap(t *testing.T, b []byte) *envoy_config_bootstrap_v3.Bootstrap {
	t.Helper()
	j, err := yaml.YAMLToJSON(b) // JSON is YAML too
	if err != nil {
		t.Fatal(err)
	}
	bs := &envoy_config_bootstrap_v3.Bootstrap{}
	if err := (protojson.UnmarshalOptions{}).Unmarshal(j, bs); err != nil {
		t.Fatalf("not a Bootstrap: %v\n%s", err, b)
	}
	if err := bs.ValidateAll(); err != nil {
		t.Fatalf("invalid Bootstrap: %v", err)
	}
	n := validateNested(t, bs.ProtoReflect())
	if n < 3 {
		t.Fatalf("only %d typed configs checked", n)
	}
	return bs
}

// validateNested unpacks every Any below m, validates it and recurses; it
// returns how many it checked.
func validateNested(t *testing.T, m protoreflect.Message) int {
	t.Helper()
	n := 0
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				n += validateMessage(t, mv.Message())
				return true
			})
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				n += validateMessage(t, v.List().Get(i).Message())
			}
		case fd.Message() != nil:
			n += validateMessage(t, v.Message())
		}
		return true
	})
	return n
}

func validateMessage(t *testing.T, m protoreflect.Message) int {
	t.Helper()
	a, ok := m.Interface().(*anypb.Any)
	if !ok {
		return validateNested(t, m)
	}
	inner, err := a.UnmarshalNew()
	if err != nil {
		t.Fatalf("%s: %v", a.GetTypeUrl(), err)
	}
	if v, ok := inner.(interface{ ValidateAll() error }); ok {
		if err := v.ValidateAll(); err != nil {
			t.Fatalf("%s: %v", a.GetTypeUrl(), err)
		}
	} else {
		t.Fatalf("%s has no validation rules", a.GetTypeUrl())
	}
	return 1 + validateNested(t, inner.ProtoReflect())
}

func TestBootstrapDefaults(t *testing.T) {
	t.Setenv("POD_NAME", "envoy-7d9f")
	out, err := runCommand(t, "bootstrap")
	if err != nil {
		t.Fatal(err)
	}
	bs := loadBootstrap(t, []byte(out))
	if bs.GetNode().GetId() != "envoy-7d9f" || bs.GetNode().GetMetadata().GetFields()["switchyard.dev/group"].GetStringValue() != "envoy" {
		t.Errorf("node: %v", bs.GetNode())
	}
	ads := bs.GetDynamicResources().GetAdsConfig()
	if ads.GetApiType() != envoy_config_core_v3.ApiConfigSource_DELTA_GRPC || ads.GetGrpcServices()[0].GetEnvoyGrpc().GetClusterName() != xdsClusterName {
		t.Errorf("ADS: %v", ads)
	}
	if a := bs.GetAdmin().GetAddress().GetSocketAddress(); a.GetAddress() != "127.0.0.1" {
		t.Errorf("admin listens on %v", a)
	}
	xds := bs.GetStaticResources().GetClusters()[0]
	ep := xds.GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
	if xds.GetName() != xdsClusterName || xds.GetType().String() != "STATIC" || ep.GetAddress() != "127.0.0.1" || ep.GetPortValue() != 8001 || xds.GetTransportSocket() != nil {
		t.Errorf("xDS cluster: %v", xds)
	}
}

func TestBootstrapMutualTLSToFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "envoy.yaml")
	_, err := runCommand(t, "bootstrap", "--node-id", "e1", "--xds-api", "sotw",
		"--xds-address", "switchyard.switchyard-system.svc:8001",
		"--xds-tls-cert", "/certs/tls.crt", "--xds-tls-key", "/certs/tls.key", "--xds-tls-ca", "/certs/ca.crt",
		"--out", path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(strings.TrimSpace(string(b)), "{") {
		t.Error("--out envoy.yaml wrote JSON")
	}
	bs := loadBootstrap(t, b)
	if bs.GetDynamicResources().GetAdsConfig().GetApiType() != envoy_config_core_v3.ApiConfigSource_GRPC {
		t.Error("--xds-api sotw ignored")
	}
	xds := bs.GetStaticResources().GetClusters()[0]
	if xds.GetType().String() != "STRICT_DNS" {
		t.Errorf("a DNS name needs STRICT_DNS, got %v", xds.GetType())
	}
	tlsCtx := &envoy_transport_socket_tls_v3.UpstreamTlsContext{}
	if err := xds.GetTransportSocket().GetTypedConfig().UnmarshalTo(tlsCtx); err != nil {
		t.Fatal(err)
	}
	common := tlsCtx.GetCommonTlsContext()
	san := common.GetValidationContext().GetMatchTypedSubjectAltNames()
	if tlsCtx.GetSni() != "switchyard.switchyard-system.svc" || len(san) != 1 || san[0].GetMatcher().GetExact() != tlsCtx.GetSni() ||
		common.GetTlsCertificates()[0].GetPrivateKey().GetFilename() != "/certs/tls.key" ||
		common.GetValidationContext().GetTrustedCa().GetFilename() != "/certs/ca.crt" {
		t.Errorf("TLS context: %v", prototext(tlsCtx))
	}
}

func TestBootstrapRejects(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--xds-tls-cert", "c", "--xds-tls-key", "k"}, "need --xds-tls-ca"},
		{[]string{"--xds-tls-ca", "ca", "--xds-tls-cert", "c"}, "go together"},
		{[]string{"--xds-address", "nohost"}, "--xds-address"},
		{[]string{"--xds-api", "rest"}, "--xds-api"},
		{[]string{"--format", "toml"}, "--format"},
	} {
		_, err := runCommand(t, append([]string{"bootstrap"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

func prototext(m proto.Message) string {
	b, _ := protojson.Marshal(m)
	return string(b)
}

// TestBootstrapGateway: --gateway puts the gateway in the node metadata,
// where serve reads it; without the flag the node names none.
func TestBootstrapGateway(t *testing.T) {
	for flag, want := range map[string]string{"--gateway=edge-b": "edge-b", "--node-id=x": ""} {
		out, err := runCommand(t, "bootstrap", flag)
		if err != nil {
			t.Fatal(err)
		}
		md := loadBootstrap(t, []byte(out)).GetNode().GetMetadata().GetFields()
		if got := md["switchyard.dev/gateway"].GetStringValue(); got != want || md["switchyard.dev/group"].GetStringValue() != "envoy" {
			t.Errorf("%s: node metadata %v, want gateway %q", flag, md, want)
		}
	}
}
