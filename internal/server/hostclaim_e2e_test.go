package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/switchyard-dev/switchyard/internal/grpcpeer"
	"github.com/switchyard-dev/switchyard/internal/server"
)

// claimYAML is a root proxy shop/name for fqdn, sending every RPC to the
// Service backend.
func claimYAML(name, fqdn, backend string) string {
	return fmt.Sprintf(`apiVersion: switchyard.dev/v1
kind: HTTPProxy
metadata: {name: %s, namespace: shop}
spec:
  virtualhost: {fqdn: %s}
  routes:
  - services: [{name: %s, port: 80}]
`, name, fqdn, backend)
}

// TestHostNameStaysWithFirstClaim adds, while serve runs, a proxy claiming
// a host name another proxy already serves. The newcomer sorts first both
// by file and by namespace/name, so only the time each was first seen can
// keep the host with the proxy serving it: the newcomer must be invalid,
// naming the holder, and gRPC's xDS client must go on reaching the
// holder's backend through edits and a move of the holder's file. Once the
// holder is deleted, the newcomer gets the host.
func TestHostNameStaysWithFirstClaim(t *testing.T) {
	dir := t.TempDir()
	holder, edited, newcomer := grpcpeer.StartBackend(t, "holder"), grpcpeer.StartBackend(t, "edited"), grpcpeer.StartBackend(t, "newcomer")
	writeFile(t, dir, "services.yaml", serviceYAML("shop", "holder", endpoint{holder, "z1"})+"---\n"+
		serviceYAML("shop", "edited", endpoint{edited, "z1"})+"---\n"+
		serviceYAML("shop", "newcomer", endpoint{newcomer, "z1"}))
	writeFile(t, dir, "zz-holder.yaml", claimYAML("zz-holder", "app.example.com", "holder"))
	s := controlPlane(t, dir)
	c := grpcClient(t, s, "app.example.com")
	warmUp(t, c, "holder")

	writeFile(t, dir, "aa-newcomer.yaml", claimYAML("aa-newcomer", "app.example.com", "newcomer"))
	taken := `spec.virtualhost.fqdn: "app.example.com" is already served by HTTPProxy shop/zz-holder`
	waitFor(t, 10*time.Second, "the newcomer to be refused", func() bool {
		return proxyErrors(t, s, "aa-newcomer") == taken
	})
	onlyBackend(t, c, "holder")

	// An edit that moves the holder's traffic: once it is served, the
	// newcomer is still refused.
	writeFile(t, dir, "zz-holder.yaml", claimYAML("zz-holder", "app.example.com", "edited"))
	warmUp(t, c, "edited")
	onlyBackend(t, c, "edited")
	wantClaims(t, s, taken)

	// A move of the holder's file to another directory, then a sentinel
	// whose status shows that the move has been read. The watcher may see
	// the move as a removal and an addition in two batches, and a build in
	// between may briefly serve the newcomer; what must hold is that the
	// holder has the host once the move is read.
	if err := os.Mkdir(filepath.Join(dir, "team"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "zz-holder.yaml"), filepath.Join(dir, "team", "zz-holder.yaml")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "sentinel.yaml", claimYAML("sentinel", "sentinel.example.com", "holder"))
	waitFor(t, 10*time.Second, "the sentinel to be served", func() bool {
		_, ok := proxyStatus(t, s, "sentinel")
		return ok
	})
	wantClaims(t, s, taken)
	waitFor(t, 10*time.Second, "the holder's backend to get every RPC", func() bool {
		counts, failed := tally(context.Background(), c, 20)
		return failed == 0 && counts["edited"] == 20
	})

	if err := os.Remove(filepath.Join(dir, "team", "zz-holder.yaml")); err != nil {
		t.Fatal(err)
	}
	warmUp(t, c, "newcomer")
	if errs := proxyErrors(t, s, "aa-newcomer"); errs != "" {
		t.Errorf("with the holder gone, the newcomer still has errors: %s", errs)
	}
	noNACKs(t, s)
}

// wantClaims checks that the holder is valid and the newcomer refused
// with want.
func wantClaims(t *testing.T, s *server.Server, want string) {
	t.Helper()
	if st, _ := proxyStatus(t, s, "zz-holder"); st.CurrentStatus != "valid" {
		t.Errorf("holder is %q (%v), want valid", st.CurrentStatus, st.Errors)
	}
	if got := proxyErrors(t, s, "aa-newcomer"); got != want {
		t.Errorf("newcomer's errors: %q, want %q", got, want)
	}
}

// onlyBackend makes RPCs and fails unless every one reached id.
func onlyBackend(t *testing.T, c testgrpc.TestServiceClient, id string) {
	t.Helper()
	counts, failed := tally(context.Background(), c, 100)
	if failed > 0 || counts[id] != 100 {
		t.Errorf("RPCs reached %v (%d failed), want all at %s", counts, failed, id)
	}
}

type proxyState struct {
	Kind, Namespace, Name, CurrentStatus string
	Errors                               []struct{ Type, Reason, Message string }
}

// proxyStatus returns the status of HTTPProxy shop/name as the admin
// endpoint shows it.
func proxyStatus(t *testing.T, s *server.Server, name string) (proxyState, bool) {
	t.Helper()
	resp, err := http.Get("http://" + s.AdminAddr().String() + "/debug/xds?format=json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct{ Statuses []proxyState }
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	for _, st := range doc.Statuses {
		if st.Kind == "HTTPProxy" && st.Namespace == "shop" && st.Name == name {
			return st, true
		}
	}
	return proxyState{}, false
}

// proxyErrors returns the messages of the errors of shop/name, joined.
func proxyErrors(t *testing.T, s *server.Server, name string) string {
	t.Helper()
	st, _ := proxyStatus(t, s, name)
	out := ""
	for i, e := range st.Errors {
		if i > 0 {
			out += "; "
		}
		out += e.Message
	}
	return out
}
