// Package render runs the whole translation once — DAG, translator, one
// consumer group's shaping — and prints the result the way `switchyard
// render` shows it. The golden tests print through this same code, so what
// a user sees when debugging is exactly what the tests check.
package render

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/pipeline"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Output is one group's resources and the status of every object.
type Output struct {
	// Resources maps a type URL to the resources of that type, in wire
	// order.
	Resources map[string][]proto.Message
	Statuses  []*dag.Status
	// SourceProblems are what the source could not read, one line each.
	SourceProblems []string
	// Programmed, when set, is what the data plane did with each object
	// (its Programmed condition), printed with its status.
	Programmed map[objects.Key]xdsres.Programmed
	// encoded holds the resources instead of Resources under
	// Options.Encoded, in the same order.
	encoded map[string][]*xdsres.Resource
}

// NoDataPlane marks every HTTPProxy and ExtensionService as programmed by
// no data plane: render serves nothing, so the condition is Unknown, and
// printing it says where the condition comes from.
func (o *Output) NoDataPlane() {
	o.Programmed = map[objects.Key]xdsres.Programmed{}
	for _, st := range o.Statuses {
		if k := st.Key.Kind; k == objects.KindHTTPProxy || k == objects.KindExtensionService {
			o.Programmed[st.Key] = xdsres.NoDataPlane
		}
	}
}

// Options select what is rendered.
type Options struct {
	DAG        dag.Options
	Translator translator.Options
	// Group is the consumer group; GroupNone means envoy.
	Group xdsres.Group
	// Encoded leaves Output.Resources nil and keeps the resources as the
	// engine holds them, encoded: EncodeTo decodes each one as it prints
	// it, so that the output of 10,000 proxies is never held decoded all
	// at once. For callers that only print.
	Encoded bool
}

// Run builds the snapshot the way serve does — the incremental engine,
// then the gate (internal/pipeline), with no cache behind it — and returns
// what the gate lets through to the group's clients. Resources the gate withholds
// are left out, and the objects that made them report why, whichever group
// they were for.
func Run(snap *objects.Snapshot, opts Options) (*Output, error) {
	group := opts.Group
	if group == xdsres.GroupNone {
		group = xdsres.GroupEnvoy
	}
	if !slices.Contains(xdsres.Names(), string(group)) {
		return nil, fmt.Errorf("unknown group %q: use one of %s", group, strings.Join(xdsres.Names(), ", "))
	}
	// No cache: render serves nothing, so nothing is staged or published.
	// The pipeline builds from snap itself rather than from a copy.
	p := pipeline.New(nil, pipeline.Config{DAG: opts.DAG, Translator: opts.Translator, Log: slog.New(slog.DiscardHandler), Snapshot: snap})
	// An error is a resource that does not encode, which the engine left
	// out, as serve does.
	_, _ = p.ApplySnapshot()
	byType := inWireOrder(p.Served(group))
	out := &Output{Statuses: p.Statuses()}
	if opts.Encoded {
		out.encoded = byType
		return out, nil
	}
	var err error
	out.Resources, err = decode(byType)
	return out, err
}

// inWireOrder lists what the gate lets through by type, each type in name
// order, which is the translator's wire order; empty types are left out.
func inWireOrder(served map[string]*xdsres.Set) map[string][]*xdsres.Resource {
	out := map[string][]*xdsres.Resource{}
	for url, byName := range served {
		if byName.Len() == 0 {
			continue
		}
		names := byName.Names()
		slices.Sort(names)
		list := make([]*xdsres.Resource, len(names))
		for i, name := range names {
			list[i] = byName.Get(name)
		}
		out[url] = list
	}
	return out
}

// decode decodes resources on every core. The engine keeps them encoded;
// decoding them is cheaper than translating the DAG a second time.
func decode(byType map[string][]*xdsres.Resource) (map[string][]proto.Message, error) {
	out := make(map[string][]proto.Message, len(byType))
	var all []*xdsres.Resource
	var into []*proto.Message
	for url, list := range byType {
		ms := make([]proto.Message, len(list))
		for i, r := range list {
			all, into = append(all, r), append(into, &ms[i])
		}
		out[url] = ms
	}
	return out, inOrder(len(all), func(i int) ([]byte, error) {
		m, err := decoded(all[i])
		*into[i] = m
		return nil, err
	}, func(int, []byte) error { return nil })
}

func decoded(r *xdsres.Resource) (proto.Message, error) {
	m := r.Decoded()
	if m == nil {
		return nil, fmt.Errorf("%s %q does not decode", r.Any.GetTypeUrl(), r.Name)
	}
	return m, nil
}

// Valid reports whether every object is valid and the source read every
// document: what `render` turns into its exit status.
func (o *Output) Valid() bool {
	if len(o.SourceProblems) > 0 {
		return false
	}
	for _, st := range o.Statuses {
		if st.State != switchyardv1.StatusValid {
			return false
		}
	}
	return true
}

// statusDoc is the printed form of one object's status.
type statusDoc struct {
	Kind          string                      `json:"kind"`
	Namespace     string                      `json:"namespace,omitempty"`
	Name          string                      `json:"name"`
	CurrentStatus string                      `json:"currentStatus"`
	Description   string                      `json:"description"`
	Errors        []switchyardv1.SubCondition `json:"errors,omitempty"`
	Warnings      []switchyardv1.SubCondition `json:"warnings,omitempty"`
	Programmed    *ProgrammedDoc              `json:"programmed,omitempty"`
}

// ProgrammedDoc is the printed form of a Programmed condition.
type ProgrammedDoc struct {
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// ProgrammedOf returns the printed form of an object's Programmed
// condition, nil when m has none for it.
func ProgrammedOf(m map[objects.Key]xdsres.Programmed, k objects.Key) *ProgrammedDoc {
	p, ok := m[k]
	if !ok {
		return nil
	}
	return &ProgrammedDoc{Status: p.Status, Reason: p.Reason, Message: p.Message}
}
