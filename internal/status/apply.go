package status

import (
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	accessv1alpha3 "github.com/switchyard-dev/switchyard/apis/smi/access/v1alpha3"
	splitv1alpha4 "github.com/switchyard-dev/switchyard/apis/smi/split/v1alpha4"
	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// MaxSubConditions caps the errors and the warnings written to one
// object; the description says how many errors there are in all.
const MaxSubConditions = 64

// maxMessage is metav1.Condition's limit on message length.
const maxMessage = 32768

var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// fields points into the status of one object.
type fields struct {
	current, description *string // nil for TLSCertificateDelegation
	conditions           *[]switchyardv1.DetailedCondition
}

func fieldsOf(obj runtime.Object) (fields, bool) {
	switch o := obj.(type) {
	case *switchyardv1.HTTPProxy:
		return fields{&o.Status.CurrentStatus, &o.Status.Description, &o.Status.Conditions}, true
	case *switchyardv1alpha1.ExtensionService:
		return fields{&o.Status.CurrentStatus, &o.Status.Description, &o.Status.Conditions}, true
	case *switchyardv1.TLSCertificateDelegation:
		return fields{nil, nil, &o.Status.Conditions}, true
	case *splitv1alpha4.TrafficSplit:
		return fields{&o.Status.CurrentStatus, &o.Status.Description, &o.Status.Conditions}, true
	case *accessv1alpha3.TrafficTarget:
		return fields{&o.Status.CurrentStatus, &o.Status.Description, &o.Status.Conditions}, true
	}
	return fields{}, false
}

// apply returns a copy of obj carrying st and, when prog is not nil, the
// Programmed condition prog, and whether that differs from what obj
// carries. Conditions of other types are kept (and Programmed is, when
// prog is nil). A condition's lastTransitionTime moves to now only when
// its status changes.
func apply(obj runtime.Object, st *dag.Status, prog *xdsres.Programmed, now time.Time) (runtime.Object, bool) {
	old, ok := fieldsOf(obj)
	if !ok {
		return nil, false
	}
	out := obj.DeepCopyObject()
	f, _ := fieldsOf(out)
	if f.current != nil {
		*f.current = st.State
		*f.description = st.Description
	}
	at := metav1.NewTime(now.UTC().Truncate(time.Second))
	*f.conditions = setCondition(*f.conditions, validCondition(st), at)
	if prog != nil && f.current != nil {
		*f.conditions = setCondition(*f.conditions, programmedCondition(st, prog), at)
	}
	changed := !equality.Semantic.DeepEqual(*old.conditions, *f.conditions)
	if old.current != nil {
		changed = changed || *old.current != *f.current || *old.description != *f.description
	}
	return out, changed
}

// setCondition replaces the condition of want's type in conds (or adds
// it), keeping the old transition time when the status did not change
// and at otherwise.
func setCondition(conds []switchyardv1.DetailedCondition, want switchyardv1.DetailedCondition, at metav1.Time) []switchyardv1.DetailedCondition {
	want.LastTransitionTime = at
	var out []switchyardv1.DetailedCondition
	placed := false
	for _, c := range conds {
		switch {
		case c.Type != want.Type:
			out = append(out, c)
		case !placed:
			if c.Status == want.Status {
				want.LastTransitionTime = c.LastTransitionTime
			}
			out = append(out, want)
			placed = true
		}
	}
	if !placed {
		out = append(out, want)
	}
	return out
}

// programmedCondition is the Programmed condition: what the data plane
// did with the object (see xdscache.ProgrammedOf), without its transition
// time.
func programmedCondition(st *dag.Status, p *xdsres.Programmed) switchyardv1.DetailedCondition {
	return switchyardv1.DetailedCondition{Condition: metav1.Condition{
		Type:               switchyardv1.ConditionProgrammed,
		Status:             metav1.ConditionStatus(p.Status),
		ObservedGeneration: st.Generation,
		Reason:             p.Reason,
		Message:            truncate(p.Message, maxMessage),
	}}
}

// validCondition is the Valid condition for a status, without its
// transition time.
func validCondition(st *dag.Status) switchyardv1.DetailedCondition {
	c := switchyardv1.DetailedCondition{
		Condition: metav1.Condition{
			Type:               switchyardv1.ConditionValid,
			Status:             metav1.ConditionTrue,
			ObservedGeneration: st.Generation,
			Reason:             "Valid",
			Message:            truncate(st.Description, maxMessage),
		},
		Errors:   capped(st.Errors),
		Warnings: capped(st.Warnings),
	}
	switch {
	case st.State == switchyardv1.StatusOrphaned:
		c.Status, c.Reason = metav1.ConditionFalse, "Orphaned"
	case st.State != switchyardv1.StatusValid:
		c.Status, c.Reason = metav1.ConditionFalse, "Invalid"
		// The first error's reason says more, when it is one the API
		// server accepts.
		if len(st.Errors) > 0 && len(st.Errors[0].Reason) <= 1024 && reasonPattern.MatchString(st.Errors[0].Reason) {
			c.Reason = st.Errors[0].Reason
		}
	}
	if c.Message == "" {
		c.Message = st.State
	}
	return c
}

func capped(cs []switchyardv1.SubCondition) []switchyardv1.SubCondition {
	if len(cs) == 0 {
		return nil
	}
	out := make([]switchyardv1.SubCondition, 0, min(len(cs), MaxSubConditions))
	for _, c := range cs[:min(len(cs), MaxSubConditions)] {
		c.Message = truncate(c.Message, maxMessage)
		out = append(out, c)
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "..."
}
