package k8ssource_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-dev/switchyard/internal/k8ssource"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// TestConfiguredSecretPassedOn: the Secret of serve --fallback-certificate
// is named by no object (a proxy only enables the fallback), so the source
// passes it on because the configuration names it: in the initial set,
// and again when it changes; other unreferenced Secrets stay out.
func TestConfiguredSecretPassedOn(t *testing.T) {
	ns := env.Namespace(t)
	mustCreate(t, secret(ns, "fallback", corev1.SecretTypeTLS))
	mustCreate(t, secret(ns, "unused", corev1.SecretTypeTLS))
	r := startSourceWith(t, k8ssource.Config{Secrets: []types.NamespacedName{{Namespace: ns, Name: "fallback"}}})
	fallback := objects.Key{Kind: objects.KindSecret, Namespace: ns, Name: "fallback"}
	if r.initial[fallback] == nil {
		t.Fatal("the configured Secret is not in the initial set")
	}
	if r.initial[objects.Key{Kind: objects.KindSecret, Namespace: ns, Name: "unused"}] != nil {
		t.Fatal("an unreferenced Secret was passed on")
	}

	s := secret(ns, "fallback", corev1.SecretTypeTLS)
	s.Data["tls.crt"] = []byte("renewed")
	if _, err := env.Client.CoreV1().Secrets(ns).Update(context.Background(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.waitChange(t, fallback, "the renewed configured Secret", func(c objects.Change) bool {
		sec, ok := c.Object.(*corev1.Secret)
		return ok && string(sec.Data["tls.crt"]) == "renewed"
	})
}
