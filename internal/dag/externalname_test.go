package dag

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

func externalService(nsName, externalName string, port int32) *corev1.Service {
	s := service(nsName, port)
	s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, externalName
	return s
}

// TestExternalNameCluster: with the option, a route to an ExternalName
// Service gets a cluster of that one backend carrying the name (without
// its trailing dot) and the SNI; the route's Host rewrite is the SNI.
func TestExternalNameCluster(t *testing.T) {
	r := route(svc("hosted", 443))
	r.RequestHeadersPolicy = &switchyardv1.HeadersPolicy{Set: []switchyardv1.HeaderValue{{Name: "Host", Value: "api.example.net"}}}
	res := Build(snapshot(t, root("web", "web.example.com", r), externalService("hosted", "api.vendor.example.net.", 443)), Options{ExternalNameServices: true})
	if st := statusOf(t, res, objects.KindHTTPProxy, "web"); st.State != switchyardv1.StatusValid {
		t.Fatalf("state %s: %v", st.State, errorMessages(st))
	}
	c := res.DAG.VirtualHosts[0].Routes[0].Forward.Cluster
	host, port, ok := c.Spec.ExternalName()
	if !ok || host != "api.vendor.example.net" || port != 443 || c.Spec.SNI != "api.example.net" {
		t.Errorf("cluster spec %+v: ExternalName() = %q, %d, %v", c.Spec, host, port, ok)
	}
}

// TestExternalNameRefused: off by default, with a message saying how to
// turn it on; a name that is not a DNS name is refused even when on (a
// snapshot need not come from the API server, which would refuse it).
func TestExternalNameRefused(t *testing.T) {
	for _, tc := range []struct {
		name, externalName, reason, text string
		enabled                          bool
	}{
		{"off", "api.vendor.example.net", "ServiceExternalName", "--enable-external-name-services", false},
		{"not a DNS name", "Not_A.Name", "InvalidExternalName", "spec.externalName", true},
	} {
		res := Build(snapshot(t, root("web", "web.example.com", route(svc("hosted", 80))), externalService("hosted", tc.externalName, 80)), Options{ExternalNameServices: tc.enabled})
		st := statusOf(t, res, objects.KindHTTPProxy, "web")
		if len(st.Errors) != 1 || st.Errors[0].Reason != tc.reason || !strings.Contains(st.Errors[0].Message, tc.text) {
			t.Errorf("%s: errors %+v, want one %s naming %s", tc.name, st.Errors, tc.reason, tc.text)
		}
	}
}
