package testenv

import (
	"context"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var env *Env

func TestMain(m *testing.M) { os.Exit(Main(m, &env)) }

// TestCRDsInstalled checks that the CRDs are served and that a restarted
// API server is reachable with the same client configuration.
func TestCRDsInstalled(t *testing.T) {
	ctx := context.Background()
	for _, gv := range []string{"switchyard.dev/v1", "switchyard.dev/v1alpha1"} {
		if _, err := env.Client.Discovery().ServerResourcesForGroupVersion(gv); err != nil {
			t.Fatalf("%s: %v", gv, err)
		}
	}
	if err := env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	if err := env.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
}
