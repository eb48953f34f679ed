package dag

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestKeyPairCache checks that a remembered check answers as a fresh one,
// for a valid pair and for a key that does not match its certificate.
func TestKeyPairCache(t *testing.T) {
	good := tlsSecret("web/cert").Data
	c := NewKeyPairCache()
	for range 2 {
		if err := c.check(good[corev1.TLSCertKey], good[corev1.TLSPrivateKeyKey]); err != nil {
			t.Fatalf("valid pair: %v", err)
		}
	}
	badKey := []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
	want := (*KeyPairCache)(nil).check(good[corev1.TLSCertKey], badKey)
	if want == nil {
		t.Fatal("a key that does not parse must fail")
	}
	for range 2 {
		if err := c.check(good[corev1.TLSCertKey], badKey); err == nil || err.Error() != want.Error() {
			t.Fatalf("remembered check: %v, want %v", err, want)
		}
	}
	if n := c.Len(); n != 2 {
		t.Fatalf("%d pairs remembered, want 2", n)
	}
}
