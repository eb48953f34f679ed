package dag

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// testCert is one self-signed certificate shared by the tests of this
// package; generating it once keeps the tests fast.
var testCert = sync.OnceValues(func() ([]byte, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test"},
		DNSNames:              []string{"example.com"},
		NotBefore:             time.Unix(0, 0),
		NotAfter:              time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
})

func meta(nsName string) metav1.ObjectMeta {
	ns, name, ok := strings.Cut(nsName, "/")
	if !ok {
		ns, name = "default", nsName
	}
	return metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1}
}

func proxy(nsName string, spec switchyardv1.HTTPProxySpec) *switchyardv1.HTTPProxy {
	return &switchyardv1.HTTPProxy{ObjectMeta: meta(nsName), Spec: spec}
}

func root(nsName, fqdn string, routes ...switchyardv1.Route) *switchyardv1.HTTPProxy {
	return proxy(nsName, switchyardv1.HTTPProxySpec{VirtualHost: &switchyardv1.VirtualHost{Fqdn: fqdn}, Routes: routes})
}

func service(nsName string, ports ...int32) *corev1.Service {
	s := &corev1.Service{ObjectMeta: meta(nsName)}
	for _, p := range ports {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: p, Protocol: corev1.ProtocolTCP})
	}
	return s
}

func tlsSecret(nsName string) *corev1.Secret {
	cert, key := testCert()
	return &corev1.Secret{ObjectMeta: meta(nsName), Type: corev1.SecretTypeTLS, Data: map[string][]byte{
		corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key,
	}}
}

func caSecret(nsName string) *corev1.Secret {
	cert, _ := testCert()
	return &corev1.Secret{ObjectMeta: meta(nsName), Data: map[string][]byte{CACertificateKey: cert}}
}

func delegation(nsName, secret string, targets ...string) *switchyardv1.TLSCertificateDelegation {
	return &switchyardv1.TLSCertificateDelegation{ObjectMeta: meta(nsName), Spec: switchyardv1.TLSCertificateDelegationSpec{
		Delegations: []switchyardv1.CertificateDelegation{{SecretName: secret, TargetNamespaces: targets}},
	}}
}

func extension(nsName string, targets ...switchyardv1alpha1.ExtensionServiceTarget) *switchyardv1alpha1.ExtensionService {
	return &switchyardv1alpha1.ExtensionService{ObjectMeta: meta(nsName), Spec: switchyardv1alpha1.ExtensionServiceSpec{Services: targets}}
}

func svc(name string, port int32) switchyardv1.Service {
	return switchyardv1.Service{Name: name, Port: port}
}

func weighted(name string, port int32, w int64) switchyardv1.Service {
	return switchyardv1.Service{Name: name, Port: port, Weight: &w}
}

func route(services ...switchyardv1.Service) switchyardv1.Route {
	return switchyardv1.Route{Services: services}
}

func prefixRoute(prefix string, services ...switchyardv1.Service) switchyardv1.Route {
	return switchyardv1.Route{Conditions: []switchyardv1.MatchCondition{{Prefix: prefix}}, Services: services}
}

func ptr[T any](v T) *T { return &v }

// snapshot builds a snapshot from objects, failing the test on an
// unsupported one.
func snapshot(t testing.TB, objs ...runtime.Object) *objects.Snapshot {
	t.Helper()
	s := objects.NewSnapshot()
	for _, o := range objs {
		if _, err := s.Upsert(o); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// statusOf finds the status of an object, failing the test when absent.
func statusOf(t testing.TB, res *Result, kind objects.Kind, nsName string) *Status {
	t.Helper()
	m := meta(nsName)
	for _, st := range res.Statuses {
		if st.Key == (objects.Key{Kind: kind, Namespace: m.Namespace, Name: m.Name}) {
			return st
		}
	}
	t.Fatalf("no status for %s %s", kind, nsName)
	return nil
}

// errorMessages lists the error messages of a status.
func errorMessages(st *Status) []string {
	var out []string
	for _, e := range st.Errors {
		out = append(out, e.Message)
	}
	return out
}
