package pipeline

import (
	"slices"
	"strings"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Conditions are the gate's errors, by the object that reports each.
type Conditions map[objects.Key][]switchyardv1.SubCondition

// OwnersFunc returns the objects whose output contains a resource
// (incremental.Engine.Owners).
type OwnersFunc func(g xdsres.Group, typeURL, name string) []objects.Key

// RejectionConditions turns rejections into the conditions of the objects
// that made each resource. Only HTTPProxies and ExtensionServices have a
// status; the Services, EndpointSlices and Secrets a resource was made
// from are named in the message of theirs.
func RejectionConditions(rejections []Rejection, owners OwnersFunc) Conditions {
	// The groups share most resources: one failure is reported once, for
	// every group it was withheld from.
	type failure struct{ typ, name, err string }
	var order []failure
	groups := map[failure][]string{}
	failed := map[failure]Rejection{}
	for _, rj := range rejections {
		f := failure{rj.Type, rj.Name, rj.Err.Error()}
		if groups[f] == nil {
			order = append(order, f)
		}
		groups[f] = append(groups[f], string(rj.Group))
		failed[f] = rj
	}
	out := Conditions{}
	report := func(group, typ, name, problem string, keys []objects.Key) {
		var reporting []objects.Key
		var from []string
		for _, k := range keys {
			switch k.Kind {
			case objects.KindHTTPProxy, objects.KindExtensionService:
				reporting = append(reporting, k)
			default:
				from = append(from, k.String())
			}
		}
		c := dag.ResourceRejected(group, kindName(typ), name, from, problem)
		for _, k := range reporting {
			out[k] = append(out[k], c)
		}
	}
	for _, f := range order {
		group := strings.Join(groups[f], " and ")
		if hosts := failed[f].Hosts; len(hosts) > 0 {
			// Every secure host has a filter chain on the HTTPS listener:
			// only the hosts whose chain is withheld are told.
			for _, h := range hosts {
				report(group, f.typ, f.name, "filter chain for "+h.FQDN+": "+h.Problem,
					owners(xdsres.GroupEnvoy, resource.RouteType, h.Route))
			}
			continue
		}
		report(group, f.typ, f.name, f.err, owners(xdsres.Group(groups[f][0]), f.typ, f.name))
	}
	return out
}

// PatchStatus returns st with the errors and warnings added (st itself
// when there are none).
func PatchStatus(st *dag.Status, errs, warns []switchyardv1.SubCondition) *dag.Status {
	if len(errs)+len(warns) == 0 || st == nil {
		return st
	}
	return dag.JoinStatus(st.Key, []*dag.Status{st}, errs, warns)
}

// PatchStatuses returns the statuses with the errors and warnings added,
// a new slice when any are.
func PatchStatuses(list []*dag.Status, errs, warns Conditions) []*dag.Status {
	if len(errs)+len(warns) == 0 {
		return list
	}
	out := slices.Clone(list)
	for i, st := range out {
		out[i] = PatchStatus(st, errs[st.Key], warns[st.Key])
	}
	return out
}

// patchUpdate adds the gate's errors and the endpoint warnings to what a
// build changed in the statuses, and the statuses of objects whose
// conditions changed though the build did not recompute them.
func (p *Pipeline) patchUpdate(u dag.StatusUpdate, conds, warns Conditions) dag.StatusUpdate {
	differs := map[objects.Key]bool{}
	for _, pair := range [][2]Conditions{{conds, p.conds}, {warns, p.warns}} {
		now, before := pair[0], pair[1]
		for k, cs := range now {
			if !slices.Equal(cs, before[k]) {
				differs[k] = true
			}
		}
		for k := range before {
			if _, ok := now[k]; !ok {
				differs[k] = true
			}
		}
	}
	if len(differs) == 0 && len(conds)+len(warns) == 0 {
		return u
	}
	changed := make([]*dag.Status, 0, len(u.Changed)+len(differs))
	for _, st := range u.Changed {
		delete(differs, st.Key)
		changed = append(changed, PatchStatus(st, conds[st.Key], warns[st.Key]))
	}
	for _, k := range u.Removed {
		delete(differs, k)
	}
	added := false
	for k := range differs {
		if st := p.engine.Status(k); st != nil {
			changed = append(changed, PatchStatus(st, conds[k], warns[k]))
			added = true
		}
	}
	if added {
		slices.SortFunc(changed, func(a, b *dag.Status) int { return a.Key.Compare(b.Key) })
	}
	u.Changed = changed
	return u
}
