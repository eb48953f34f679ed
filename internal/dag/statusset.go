package dag

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// statusSet collects the statuses of the objects one unit of the build
// touched. Units are merged by mergeStatus, so the same object reached from
// two roots ends with the union of what both found.
type statusSet map[objects.Key]*Status

func (s statusSet) of(key objects.Key, generation int64) *Status {
	st, ok := s[key]
	if !ok {
		st = &Status{Key: key, Generation: generation}
		s[key] = st
	}
	return st
}

// MaxSubConditions bounds the errors, and the warnings, a status lists: a
// proxy with 5,000 broken routes must not make a status larger than the
// API server stores. What is left out is counted in one more
// sub-condition.
const MaxSubConditions = 100

// maxConditionMessage bounds one message: messages quote the values at
// fault, and a 10 MB value must not be copied into a status.
const maxConditionMessage = 1024

// addError records a problem that makes the object (or part of it)
// unusable. The message must name the field at fault.
func (st *Status) addError(typ, reason, format string, args ...any) {
	st.Errors = append(st.Errors, switchyardv1.SubCondition{Type: typ, Reason: reason, Message: boundMessage(fmt.Sprintf(format, args...))})
}

// addWarning records a problem that did not stop the object being served.
func (st *Status) addWarning(typ, reason, format string, args ...any) {
	st.Warnings = append(st.Warnings, switchyardv1.SubCondition{Type: typ, Reason: reason, Message: boundMessage(fmt.Sprintf(format, args...))})
}

// boundMessage cuts a message to maxConditionMessage bytes, on a rune
// boundary, saying that it did.
func boundMessage(m string) string {
	if len(m) <= maxConditionMessage {
		return m
	}
	const more = "... (truncated)"
	cut := maxConditionMessage - len(more)
	for cut > 0 && !utf8.RuneStart(m[cut]) {
		cut--
	}
	return m[:cut] + more
}

// boundConditions keeps the first MaxSubConditions of a sorted list and
// counts the rest in a last sub-condition.
func boundConditions(cs []switchyardv1.SubCondition, what string) []switchyardv1.SubCondition {
	if len(cs) <= MaxSubConditions {
		return cs
	}
	n := len(cs) - MaxSubConditions
	return append(cs[:MaxSubConditions:MaxSubConditions], switchyardv1.SubCondition{
		Type: ErrSpec, Reason: "TooMany" + what,
		Message: fmt.Sprintf("spec: %d more %s not listed; fix the ones above first", n, strings.ToLower(what)),
	})
}

// Valid reports whether the object had no errors.
func (st *Status) Valid() bool { return len(st.Errors) == 0 && st.State != switchyardv1.StatusOrphaned }

// mergeStatus folds src into dst, dropping duplicate sub-conditions.
func mergeStatus(dst, src *Status) {
	dst.Errors = appendUnique(dst.Errors, src.Errors)
	dst.Warnings = appendUnique(dst.Warnings, src.Warnings)
	if src.Generation > dst.Generation {
		dst.Generation = src.Generation
	}
}

func appendUnique(dst, src []switchyardv1.SubCondition) []switchyardv1.SubCondition {
	for _, c := range src {
		dup := false
		for _, d := range dst {
			if d == c {
				dup = true
				break
			}
		}
		if !dup {
			dst = append(dst, c)
		}
	}
	return dst
}

// finalize sets State and Description from the collected conditions and
// sorts them, so the status is the same whatever order units ran in.
func (st *Status) finalize(kind string) {
	sortConditions(st.Errors)
	sortConditions(st.Warnings)
	total := len(st.Errors)
	st.Errors = boundConditions(st.Errors, "Errors")
	st.Warnings = boundConditions(st.Warnings, "Warnings")
	switch {
	case st.State == switchyardv1.StatusOrphaned:
		st.Description = "this HTTPProxy is not a root and no valid root includes it"
	case len(st.Errors) > 0:
		st.State = switchyardv1.StatusInvalid
		st.Description = st.Errors[0].Message
		if n := total; n > 1 {
			st.Description += fmt.Sprintf(" (and %d more)", n-1)
		}
	default:
		st.State = switchyardv1.StatusValid
		st.Description = "valid " + kind
	}
}

func sortConditions(cs []switchyardv1.SubCondition) {
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Message != cs[j].Message {
			return cs[i].Message < cs[j].Message
		}
		if cs[i].Type != cs[j].Type {
			return cs[i].Type < cs[j].Type
		}
		return cs[i].Reason < cs[j].Reason
	})
}
