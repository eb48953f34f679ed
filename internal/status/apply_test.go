package status

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

var (
	t0 = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Minute)
)

func valid(gen int64) *dag.Status {
	return &dag.Status{Key: objects.Key{Kind: objects.KindHTTPProxy, Namespace: "ns", Name: "p"}, Generation: gen, State: switchyardv1.StatusValid, Description: "valid HTTPProxy"}
}

func invalid(gen int64, msgs ...string) *dag.Status {
	st := valid(gen)
	st.State = switchyardv1.StatusInvalid
	for _, m := range msgs {
		st.Errors = append(st.Errors, switchyardv1.SubCondition{Type: dag.ErrService, Reason: "ServiceNotFound", Message: m})
	}
	st.Description = msgs[0]
	return st
}

func validCond(p *switchyardv1.HTTPProxy) switchyardv1.DetailedCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == switchyardv1.ConditionValid {
			return c
		}
	}
	return switchyardv1.DetailedCondition{}
}

func TestApplyTransitions(t *testing.T) {
	p := &switchyardv1.HTTPProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Generation: 1}}
	p.Status.Conditions = []switchyardv1.DetailedCondition{{Condition: metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ByHand", LastTransitionTime: metav1.NewTime(t0)}}}

	// A first status: written, transition now.
	out, changed := apply(p, valid(1), nil, t0)
	if !changed {
		t.Fatal("a first status must be written")
	}
	p1 := out.(*switchyardv1.HTTPProxy)
	c := validCond(p1)
	if p1.Status.CurrentStatus != "valid" || c.Status != metav1.ConditionTrue || c.Reason != "Valid" || c.ObservedGeneration != 1 || !c.LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("first status: %+v, condition %+v", p1.Status, c)
	}
	if len(p1.Status.Conditions) != 2 || p1.Status.Conditions[0].Type != "Ready" {
		t.Fatalf("a condition of another type was lost: %+v", p1.Status.Conditions)
	}

	// The same status later: nothing to write.
	if _, changed := apply(p1, valid(1), nil, t1); changed {
		t.Fatal("an unchanged status must not be written")
	}

	// Invalid: the condition flips, its transition time moves, the
	// reason is the first error's.
	out, changed = apply(p1, invalid(2, "spec.routes[0].services[0]: Service ns/a not found"), nil, t1)
	p2 := out.(*switchyardv1.HTTPProxy)
	c = validCond(p2)
	if !changed || c.Status != metav1.ConditionFalse || c.Reason != "ServiceNotFound" || !c.LastTransitionTime.Time.Equal(t1) || c.ObservedGeneration != 2 || len(c.Errors) != 1 {
		t.Fatalf("invalid: changed %v, condition %+v", changed, c)
	}

	// Still invalid, for another reason: rewritten, same transition time.
	out, changed = apply(p2, invalid(2, "spec.routes[0].services[0]: Service ns/b not found"), nil, t1.Add(time.Hour))
	c = validCond(out.(*switchyardv1.HTTPProxy))
	if !changed || !c.LastTransitionTime.Time.Equal(t1) || c.Message != "spec.routes[0].services[0]: Service ns/b not found" {
		t.Fatalf("still invalid: changed %v, condition %+v", changed, c)
	}
	if validCond(p2).Message == c.Message {
		t.Fatal("apply modified its input")
	}
}

func TestApplyDelegationAndCaps(t *testing.T) {
	d := &switchyardv1.TLSCertificateDelegation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d"}}
	var msgs []string
	for i := range 100 {
		msgs = append(msgs, fmt.Sprintf("spec.delegations[%d].secretName: must be set", i))
	}
	st := invalid(3, msgs...)
	st.Key.Kind = objects.KindTLSCertificateDelegation
	st.Errors[0].Reason = "not a valid reason!"
	out, changed := apply(d, st, nil, t0)
	got := out.(*switchyardv1.TLSCertificateDelegation).Status.Conditions
	if !changed || len(got) != 1 || len(got[0].Errors) != MaxSubConditions || got[0].Reason != "Invalid" {
		t.Fatalf("changed %v, conditions %+v", changed, got)
	}
}

func programmedCond(p *switchyardv1.HTTPProxy) (switchyardv1.DetailedCondition, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == switchyardv1.ConditionProgrammed {
			return c, true
		}
	}
	return switchyardv1.DetailedCondition{}, false
}

// TestApplyProgrammed writes the Programmed condition beside Valid: only
// a change of status moves its transition time, and a status without a
// Programmed verdict leaves the last one in place.
func TestApplyProgrammed(t *testing.T) {
	p := &switchyardv1.HTTPProxy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Generation: 1}}
	ok := &xdsres.Programmed{Status: "True", Reason: xdsres.ReasonProgrammed, Message: "acknowledged"}
	out, changed := apply(p, valid(1), ok, t0)
	c, found := programmedCond(out.(*switchyardv1.HTTPProxy))
	if !changed || !found || c.Status != metav1.ConditionTrue || c.Reason != "Programmed" || c.ObservedGeneration != 1 || !c.LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("first Programmed condition: changed=%v %+v", changed, c)
	}
	p1 := out.(*switchyardv1.HTTPProxy)
	if _, changed := apply(p1, valid(1), ok, t1); changed {
		t.Fatal("the same condition again must not be written")
	}
	if _, changed := apply(p1, valid(1), nil, t1); changed {
		t.Fatal("no verdict must leave the condition as it is")
	}
	rejected := &xdsres.Programmed{Status: "False", Reason: xdsres.ReasonRejected, Message: `node "e1" (envoy) rejected Cluster "c": bad`}
	out, changed = apply(p1, valid(1), rejected, t1)
	c, _ = programmedCond(out.(*switchyardv1.HTTPProxy))
	if !changed || c.Status != metav1.ConditionFalse || c.Reason != "Rejected" || c.Message != rejected.Message || !c.LastTransitionTime.Time.Equal(t1) {
		t.Fatalf("rejected: changed=%v %+v", changed, c)
	}
	if vc := validCond(out.(*switchyardv1.HTTPProxy)); vc.Status != metav1.ConditionTrue || !vc.LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("the Valid condition must not move: %+v", vc)
	}
}
