package dag_test

import (
	"math/rand"
	"testing"

	"github.com/switchyard-dev/switchyard/internal/dag"
)

// TestGeneratorReach keeps the fuzz generator honest: over random inputs
// it must make valid and invalid objects of every kind, secure and plain
// virtual hosts, clusters, secrets and DNS names, and hit most of the
// builder's error reasons. A generator that only made invalid objects
// would let FuzzBuild pass while checking nothing.
func TestGeneratorReach(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	count := map[string]int{}
	reasons := map[string]bool{}
	for range 2000 {
		b := make([]byte, 300)
		r.Read(b)
		c := &choices{data: b}
		opts := c.options()
		res := dag.Build(snapshotOf(t, genObjects(c)...), opts)
		for _, st := range res.Statuses {
			count[st.Key.Kind.String()+" "+st.State]++
			for _, e := range st.Errors {
				reasons[e.Reason] = true
			}
		}
		count["plain virtual hosts"] += len(res.DAG.VirtualHosts)
		count["secure virtual hosts"] += len(res.DAG.SecureVirtualHosts)
		count["secrets"] += len(res.DAG.Secrets)
		count["clusters"] += len(res.DAG.Clusters)
		count["DNS names"] += len(res.DAG.DNSNames)
	}
	t.Logf("over 2000 graphs: %v; %d error reasons", count, len(reasons))
	for _, k := range []string{
		"HTTPProxy valid", "HTTPProxy invalid", "HTTPProxy orphaned",
		"ExtensionService valid", "ExtensionService invalid",
		"TLSCertificateDelegation valid", "TLSCertificateDelegation invalid",
		"plain virtual hosts", "secure virtual hosts", "secrets", "clusters", "DNS names",
	} {
		if count[k] == 0 {
			t.Errorf("the generator never made %s", k)
		}
	}
	if len(reasons) < 40 {
		t.Errorf("the generator reached only %d error reasons", len(reasons))
	}
}
