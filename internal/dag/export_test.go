package dag

// Exported for the tests in package dag_test, which import the translator
// (and so cannot live in package dag without an import cycle).

// SharedCertificate returns the PEM certificate and key the tests share.
func SharedCertificate() (cert, key []byte) { return testCert() }

// EnvoyHeaderValue is envoyHeaderValue, for a service-level policy of
// service:port in namespace ns.
func EnvoyHeaderValue(value, ns, service, port string) string {
	return envoyHeaderValue(value, headerVars{namespace: ns, service: service, servicePort: port})
}
