package dirsource

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// goodBefore and goodAfter surround every bad document, so that each case
// also shows that the rest of the file still loads and that the line is
// counted from the top of the file. The bad document starts on line 8.
const (
	goodBefore = `apiVersion: v1
kind: Service
metadata: {name: before, namespace: shop}
spec:
  ports:
  - port: 80
---
`
	goodAfter = `---
apiVersion: v1
kind: Secret
metadata: {name: after, namespace: shop}
stringData: {key: value}
`
)

// TestValidateCoreKinds is the catalogue of core objects a kube-apiserver
// refuses: each is left out with the problem the API server would name,
// located by file and line, and the documents around it still load.
func TestValidateCoreKinds(t *testing.T) {
	slice := func(addressType, endpoints, ports string) string {
		return "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web-1, namespace: shop}\n" +
			addressType + "endpoints: " + endpoints + "\nports: " + ports + "\n"
	}
	const ipv4, ok, okPorts = "addressType: IPv4\n", `[{addresses: ["10.0.0.1"]}]`, `[{name: http, port: 8080}]`
	service := func(spec string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: " + spec + "\n"
	}
	secret := func(typ, data string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: shop}\ntype: " + typ + "\nstringData: " + data + "\n"
	}
	const es, svc, sec = "core.yaml:8: EndpointSlice shop/web-1: ", "core.yaml:8: Service shop/web: ", "core.yaml:8: Secret shop/creds: "
	tests := []struct {
		name, input, want string
	}{
		// EndpointSlice addresses, by addressType.
		{"IPv4 address out of range", slice(ipv4, `[{addresses: ["10.0.0.999"]}]`, okPorts),
			es + `endpoints[0].addresses[0]: Invalid value: "10.0.0.999": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`},
		{"IPv4 address with a leading zero", slice(ipv4, `[{addresses: ["10.0.0.1", "010.0.0.2"]}]`, okPorts),
			es + `endpoints[0].addresses[1]: Invalid value: "010.0.0.2": must not have leading 0s`},
		{"IPv6 address in an IPv4 slice", slice(ipv4, `[{addresses: ["2001:db8::1"]}]`, okPorts),
			es + `endpoints[0].addresses[0]: Invalid value: "2001:db8::1": must be an IPv4 address, as addressType says`},
		{"IPv4 address in an IPv6 slice", slice("addressType: IPv6\n", ok, okPorts),
			es + `endpoints[0].addresses[0]: Invalid value: "10.0.0.1": must be an IPv6 address, as addressType says`},
		{"host name as an IP address", slice(ipv4, `[{addresses: ["web.example.com"]}]`, okPorts),
			es + `endpoints[0].addresses[0]: Invalid value: "web.example.com": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`},
		{"FQDN that is not a domain name", slice("addressType: FQDN\n", `[{addresses: ["web_1.example.com"]}]`, okPorts),
			es + `endpoints[0].addresses[0]: Invalid value: "web_1.example.com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"addressType missing", slice("", ok, okPorts),
			es + `addressType: Required value: one of FQDN, IPv4, IPv6`},
		{"addressType unknown", slice("addressType: IPX\n", ok, okPorts),
			es + `addressType: Unsupported value: "IPX": supported values: "FQDN", "IPv4", "IPv6"`},
		{"endpoint without addresses", slice(ipv4, `[{addresses: []}]`, okPorts),
			es + `endpoints[0].addresses: Required value: must contain at least 1 address`},
		{"endpoint nodeName", slice(ipv4, `[{addresses: ["10.0.0.1"], nodeName: Node_1}]`, okPorts),
			es + `endpoints[0].nodeName: Invalid value: "Node_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"endpoint hostname", slice(ipv4, `[{addresses: ["10.0.0.1"], hostname: web.1}]`, okPorts),
			es + `endpoints[0].hostname: Invalid value: "web.1": must not contain dots`},
		{"endpoint zone", slice(ipv4, `[{addresses: ["10.0.0.1"], zone: "zone a"}]`, okPorts),
			es + `endpoints[0].zone: Invalid value: "zone a": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		// EndpointSlice ports.
		{"port too large", slice(ipv4, ok, `[{name: http, port: 70000}]`),
			es + `ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive`},
		{"port zero", slice(ipv4, ok, `[{name: http, port: 0}]`),
			es + `ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive`},
		{"port name", slice(ipv4, ok, `[{name: HTTP_1, port: 8080}]`),
			es + `ports[0].name: Invalid value: "HTTP_1": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		{"port names repeated", slice(ipv4, ok, `[{name: http, port: 8080}, {name: http, port: 8081}]`),
			es + `ports[1].name: Duplicate value: "http"`},
		{"port protocol", slice(ipv4, ok, `[{name: http, port: 8080, protocol: HTTP}]`),
			es + `ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"`},
		{"port appProtocol", slice(ipv4, ok, `[{name: http, port: 8080, appProtocol: "a/b/c"}]`),
			es + `ports[0].appProtocol: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`},
		// Service ports and target ports.
		{"service port too large", service(`{ports: [{port: 70000}]}`),
			svc + `spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive`},
		{"service port missing", service(`{ports: [{targetPort: 8080}]}`),
			svc + `spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive`},
		{"service without ports", service(`{selector: {app: web}}`),
			svc + `spec.ports: Required value: only a headless (clusterIP: None) or ExternalName Service may have none`},
		{"target port too large", service(`{ports: [{port: 80, targetPort: 65536}]}`),
			svc + `spec.ports[0].targetPort: Invalid value: 65536: must be between 1 and 65535, inclusive`},
		{"target port name", service(`{ports: [{port: 80, targetPort: web_http}]}`),
			svc + `spec.ports[0].targetPort: Invalid value: "web_http": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`},
		{"node port too large", service(`{type: NodePort, ports: [{port: 80, nodePort: 70000}]}`),
			svc + `spec.ports[0].nodePort: Invalid value: 70000: must be between 1 and 65535, inclusive`},
		{"several ports without names", service(`{ports: [{name: http, port: 80}, {port: 443}]}`),
			svc + `spec.ports[1].name: Required value: every port of a Service with several ports needs a name`},
		{"service port names repeated", service(`{ports: [{name: http, port: 80}, {name: http, port: 81}]}`),
			svc + `spec.ports[1].name: Duplicate value: "http"`},
		{"service port twice", service(`{ports: [{name: a, port: 80}, {name: b, port: 80, protocol: TCP}]}`),
			svc + `spec.ports[1]: Duplicate value: "80/TCP"`},
		{"service port protocol", service(`{ports: [{port: 80, protocol: tcp}]}`),
			svc + `spec.ports[0].protocol: Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"`},
		{"service type", service(`{type: Magic, ports: [{port: 80}]}`),
			svc + `spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`},
		{"ExternalName without a name", service(`{type: ExternalName}`),
			svc + `spec.externalName: Required value: a Service of type ExternalName needs one`},
		{"ExternalName not a domain name", service(`{type: ExternalName, externalName: "db_1.example.com."}`),
			svc + `spec.externalName: Invalid value: "db_1.example.com.": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"cluster IP", service(`{clusterIP: 10.96.0.300, ports: [{port: 80}]}`),
			svc + `spec.clusterIP: Invalid value: "10.96.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`},
		{"selector label", service(`{selector: {app: "web app"}, ports: [{port: 80}]}`),
			svc + `spec.selector: Invalid value: "web app": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		// Secret types and their keys.
		{"TLS secret without a key", secret("kubernetes.io/tls", `{tls.crt: cert}`),
			sec + `data[tls.key]: Required value: a Secret of type kubernetes.io/tls needs it`},
		{"TLS secret without anything", secret("kubernetes.io/tls", `{}`),
			sec + `data[tls.crt]: Required value: a Secret of type kubernetes.io/tls needs it; data[tls.key]: Required value: a Secret of type kubernetes.io/tls needs it`},
		{"basic-auth secret without user or password", secret("kubernetes.io/basic-auth", `{token: x}`),
			sec + `data: Required value: a Secret of type kubernetes.io/basic-auth needs username or password`},
		{"ssh-auth secret without a key", secret("kubernetes.io/ssh-auth", `{id_rsa: x}`),
			sec + `data[ssh-privatekey]: Required value: a Secret of type kubernetes.io/ssh-auth needs it`},
		{"docker config that is not JSON", secret("kubernetes.io/dockerconfigjson", `{.dockerconfigjson: "{"}`),
			sec + `data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": must be valid JSON`},
		{"service account token without its account", secret("kubernetes.io/service-account-token", `{token: x}`),
			sec + `metadata.annotations[kubernetes.io/service-account.name]: Required value: a Secret of type kubernetes.io/service-account-token needs it`},
		{"secret key", secret("Opaque", `{"a/b": x}`),
			sec + `data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`},
		// Names, namespaces and metadata, as each kind requires.
		{"node name", "apiVersion: v1\nkind: Node\nmetadata: {name: Node_1}\n",
			`core.yaml:8: Node Node_1: metadata.name "Node_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"node pod CIDR", "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nspec: {podCIDR: 10.0.0.0/33}\n",
			`core.yaml:8: Node node-1: spec.podCIDR: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`},
		{"service name not a DNS-1035 label", "apiVersion: v1\nkind: Service\nmetadata: {name: 9lives, namespace: shop}\nspec: {ports: [{port: 80}]}\n",
			`core.yaml:8: Service shop/9lives: metadata.name "9lives": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`},
		{"slice name not a DNS subdomain", "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: web_1, namespace: shop}\naddressType: IPv4\n",
			`core.yaml:8: EndpointSlice shop/web_1: metadata.name "web_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		{"namespace not a DNS label", "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: my.shop}\n",
			`core.yaml:8: Secret my.shop/creds: metadata.namespace "my.shop": must not contain dots`},
		{"label key", "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: shop, labels: {-team: a}}\n",
			sec + `metadata.labels: Invalid value: "-team": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{"annotation key", "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop, annotations: {\"a b\": x}}\nspec: {ports: [{port: 80}]}\n",
			svc + `metadata.annotations: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
	}
	wantKeys := []objects.Key{key(objects.KindService, "shop", "before"), key(objects.KindSecret, "shop", "after")}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, problems := decodeFile("core.yaml", []byte(goodBefore+tt.input+goodAfter), newOptions(nil).compact())
			if got := keysOf(objs); !slices.Equal(got, wantKeys) {
				t.Errorf("loaded %v, want only the valid documents %v", got, wantKeys)
			}
			var got []string
			for _, p := range problems {
				if p.Severity != Error {
					t.Errorf("severity %v, want error: %s", p.Severity, p)
				}
				got = append(got, p.String())
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), tt.want)
			}
		})
	}
}
