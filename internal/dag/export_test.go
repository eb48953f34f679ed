package dag

// Exported for the tests in package dag_test, which import the translator
// (and so cannot live in package dag without an import cycle).

// SharedCertificate returns the PEM certificate and key the tests share.
func SharedCertificate() (cert, key []byte) { return testCert() }
