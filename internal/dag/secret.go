package dag

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// CACertificateKey is the Secret key holding a PEM CA bundle.
const CACertificateKey = "ca.crt"

// refError is a problem with a referenced object (a Secret, a Service)
// that may go away when the object appears or changes; Reason feeds the
// status sub-condition.
type refError struct {
	Reason string
	Msg    string
}

func (e *refError) Error() string { return e.Msg }

// secretResolver looks Secrets up on behalf of one referring namespace,
// enforcing TLSCertificateDelegation for Secrets of other namespaces.
type secretResolver struct {
	snap     *objects.Snapshot
	deps     *depSet
	keyPairs *KeyPairCache
}

// parseSecretRef splits "name" or "namespace/name"; namespace defaults to
// the referrer's.
func parseSecretRef(ref, defaultNS string) (types.NamespacedName, error) {
	parts := strings.Split(ref, "/")
	switch {
	case len(parts) == 1 && parts[0] != "":
		return types.NamespacedName{Namespace: defaultNS, Name: parts[0]}, nil
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return types.NamespacedName{Namespace: parts[0], Name: parts[1]}, nil
	default:
		return types.NamespacedName{}, &refError{"SecretRefInvalid", fmt.Sprintf("%q is not a Secret name or namespace/name", ref)}
	}
}

// lookup finds a Secret, checking delegation when it lives in another
// namespace than the referrer.
func (r secretResolver) lookup(ref, referrerNS string) (*corev1.Secret, error) {
	nn, err := parseSecretRef(ref, referrerNS)
	if err != nil {
		return nil, err
	}
	r.deps.add(objects.NewKey(objects.KindSecret, nn))
	if nn.Namespace != referrerNS && !r.delegated(nn, referrerNS) {
		return nil, &refError{"SecretNotDelegated", fmt.Sprintf("Secret %s is not delegated to namespace %q: its owner must create a TLSCertificateDelegation", nn, referrerNS)}
	}
	s := r.snap.Secrets[nn]
	if s == nil {
		return nil, &refError{"SecretNotFound", fmt.Sprintf("Secret %s not found", nn)}
	}
	return s, nil
}

// delegated reports whether a TLSCertificateDelegation in the Secret's
// namespace shares it with targetNS.
func (r secretResolver) delegated(secret types.NamespacedName, targetNS string) bool {
	// Any delegation in that namespace may change the answer.
	r.deps.add(objects.Key{Kind: objects.KindTLSCertificateDelegation, Namespace: secret.Namespace})
	for d := range r.snap.DelegationsIn(secret.Namespace) {
		for _, del := range d.Spec.Delegations {
			if del.SecretName == secret.Name && (slices.Contains(del.TargetNamespaces, targetNS) || slices.Contains(del.TargetNamespaces, "*")) {
				return true
			}
		}
	}
	return false
}

// tlsSecret resolves a server certificate for a virtual host.
func (r secretResolver) tlsSecret(ref, referrerNS string) (*Secret, error) {
	s, err := r.lookup(ref, referrerNS)
	if err != nil {
		return nil, err
	}
	cert, key := s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
	if len(cert) == 0 || len(key) == 0 {
		return nil, &refError{"SecretInvalid", fmt.Sprintf("Secret %s/%s has no %s and %s: it must be a kubernetes.io/tls Secret", s.Namespace, s.Name, corev1.TLSCertKey, corev1.TLSPrivateKeyKey)}
	}
	if err := r.keyPairs.check(cert, key); err != nil {
		return nil, &refError{"SecretInvalid", fmt.Sprintf("Secret %s/%s does not hold a valid certificate and key: %v", s.Namespace, s.Name, err)}
	}
	return &Secret{
		Name:   s.Namespace + "/" + s.Name,
		Kind:   SecretTLS,
		Source: types.NamespacedName{Namespace: s.Namespace, Name: s.Name},
		Cert:   cert,
		Key:    key,
	}, nil
}

// KeyPairCache remembers whether certificate and key pairs parse and
// match, keyed by their content: checking one costs tens of microseconds,
// and a wildcard certificate may serve thousands of roots. It is not safe
// for concurrent use.
type KeyPairCache struct {
	m map[string]map[string]error
}

// NewKeyPairCache returns an empty cache.
func NewKeyPairCache() *KeyPairCache {
	return &KeyPairCache{m: map[string]map[string]error{}}
}

// Len returns the number of pairs remembered.
func (c *KeyPairCache) Len() int {
	n := 0
	for _, byKey := range c.m {
		n += len(byKey)
	}
	return n
}

// check reports whether cert and key form a valid pair; a nil cache checks
// every time.
func (c *KeyPairCache) check(cert, key []byte) error {
	if c == nil {
		_, err := tls.X509KeyPair(cert, key)
		return err
	}
	if err, ok := c.m[string(cert)][string(key)]; ok {
		return err
	}
	_, err := tls.X509KeyPair(cert, key)
	byKey := c.m[string(cert)]
	if byKey == nil {
		byKey = map[string]error{}
		c.m[string(cert)] = byKey
	}
	byKey[string(key)] = err
	return err
}

// caSecret resolves a CA bundle used to verify clients or upstreams.
func (r secretResolver) caSecret(ref, referrerNS string) (*Secret, error) {
	s, err := r.lookup(ref, referrerNS)
	if err != nil {
		return nil, err
	}
	ca := s.Data[CACertificateKey]
	if err := validateCABundle(ca); err != nil {
		return nil, &refError{"SecretInvalid", fmt.Sprintf("Secret %s/%s: %s %v", s.Namespace, s.Name, CACertificateKey, err)}
	}
	return &Secret{
		Name:   s.Namespace + "/" + s.Name + "/ca",
		Kind:   SecretCA,
		Source: types.NamespacedName{Namespace: s.Namespace, Name: s.Name},
		Cert:   ca,
	}, nil
}

// validateCABundle requires at least one PEM certificate and nothing that
// fails to parse.
func validateCABundle(b []byte) error {
	return validatePEM(b, "CERTIFICATE", "certificate", func(der []byte) error {
		_, err := x509.ParseCertificate(der)
		return err
	})
}

// validatePEM requires at least one PEM block of the type and every such
// block to parse; blocks of other types are ignored.
func validatePEM(b []byte, blockType, what string, parse func([]byte) error) error {
	if len(b) == 0 {
		return errors.New("is missing")
	}
	n := 0
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			break
		}
		if block.Type != blockType {
			continue
		}
		if err := parse(block.Bytes); err != nil {
			return fmt.Errorf("holds a %s that does not parse: %v", what, err)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("holds no PEM %s (%s)", what, blockType)
	}
	return nil
}
