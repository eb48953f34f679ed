package status_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/testenv"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// programmedOn returns the Programmed condition of a proxy on the API
// server, nil when it has none.
func programmedOn(t *testing.T, ns, name string) *switchyardv1.DetailedCondition {
	t.Helper()
	for _, c := range getProxy(t, ns, name).Status.Conditions {
		if c.Type == switchyardv1.ConditionProgrammed {
			return &c
		}
	}
	return nil
}

// TestWriteProgrammed hands the writer the data plane's verdicts: each
// change is written beside Valid, and the same verdict again costs no
// write.
func TestWriteProgrammed(t *testing.T) {
	ns := env.Namespace(t)
	p := createProxy(t, ns, "app")
	key := objects.Key{Kind: objects.KindHTTPProxy, Namespace: ns, Name: "app"}
	src := cache(t, ns)
	w, reg := startWriter(t, src.Get, nil)
	w.Update([]*dag.Status{statusOf(key, p.Generation, switchyardv1.StatusValid, "valid HTTPProxy")})
	testenv.WaitFor(t, 10*time.Second, "status valid", func() bool { return getProxy(t, ns, "app").Status.CurrentStatus == "valid" })

	ok := xdsres.Programmed{Status: "True", Reason: xdsres.ReasonProgrammed, Message: "acknowledged"}
	w.SetProgrammed(map[objects.Key]xdsres.Programmed{key: ok})
	testenv.WaitFor(t, 10*time.Second, "Programmed True", func() bool {
		c := programmedOn(t, ns, "app")
		return c != nil && c.Status == metav1.ConditionTrue
	})
	testenv.WaitFor(t, 10*time.Second, "the cache to see it", func() bool {
		o := src.Get(key)
		return o != nil && len(o.(*switchyardv1.HTTPProxy).Status.Conditions) == 2
	})
	if got := column(t, ns, "app", "Programmed"); got != "True" {
		t.Fatalf("kubectl get's Programmed column = %q, want True", got)
	}
	written := updates(t, reg, "written")
	w.SetProgrammed(map[objects.Key]xdsres.Programmed{key: ok})

	rejected := xdsres.Programmed{Status: "False", Reason: xdsres.ReasonRejected, Message: `node "e1" (envoy) rejected Cluster "c": bad`}
	w.SetProgrammed(map[objects.Key]xdsres.Programmed{key: rejected})
	// The metric moves after the write reaches the API server: wait for
	// both.
	testenv.WaitFor(t, 10*time.Second, "Programmed False", func() bool {
		c := programmedOn(t, ns, "app")
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "Rejected" && c.Message == rejected.Message && updates(t, reg, "written") > written
	})
	if n := updates(t, reg, "written") - written; n != 1 {
		t.Fatalf("%v writes after the same verdict and then a new one, want 1", n)
	}
	if v := getProxy(t, ns, "app").Status.Conditions[0]; v.Type != switchyardv1.ConditionValid || v.Status != metav1.ConditionTrue {
		t.Fatalf("the Valid condition must stay: %+v", v)
	}
}

// column returns a proxy's cell in one of the columns `kubectl get
// httpproxies` prints: the API server renders the table from the CRD's
// additionalPrinterColumns.
func column(t *testing.T, ns, name, col string) string {
	t.Helper()
	raw, err := client(t).Get().Namespace(ns).Resource("httpproxies").Name(name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(context.Background()).Raw()
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	for i, c := range table.ColumnDefinitions {
		if c.Name == col && len(table.Rows) == 1 && i < len(table.Rows[0].Cells) {
			s, _ := table.Rows[0].Cells[i].(string)
			return s
		}
	}
	t.Fatalf("no column %q in %s", col, raw)
	return ""
}
