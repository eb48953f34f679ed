// Package render runs the whole translation once — DAG, translator, one
// consumer group's shaping — and prints the result the way `switchyard
// render` shows it. The golden tests print through this same code, so what
// a user sees when debugging is exactly what the tests check.
package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/pipeline"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
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
}

// Run builds the snapshot the way serve does — the incremental engine,
// then the gate before the cache (internal/pipeline) — and translates the
// DAG for the group. Resources the gate withholds are left out, and the
// objects that made them report why, whichever group they were for.
func Run(snap *objects.Snapshot, opts Options) (*Output, error) {
	group := opts.Group
	if group == xdsres.GroupNone {
		group = xdsres.GroupEnvoy
	}
	if _, err := translator.ForGroup(group, nil, nil, opts.Translator); err != nil {
		return nil, fmt.Errorf("%w: use one of %s", err, strings.Join(xdsres.Names(), ", "))
	}
	p := pipeline.New(xdscache.New(), pipeline.Config{DAG: opts.DAG, Translator: opts.Translator, Log: slog.New(slog.DiscardHandler)})
	// An error is a resource that does not encode, which the engine left
	// out: the translation below has it, and the gate's view drops it.
	_, _ = p.Apply(pipeline.SnapshotChanges(snap))
	r, err := translator.ForGroup(group, p.DAG(), p.Snapshot(), opts.Translator)
	if err != nil {
		return nil, err
	}
	served := p.Served(group)
	// What the gate rejected is left out, or, for the HTTPS listener
	// served without a failing host's chain, printed as it is served.
	patched := map[string]map[string]bool{}
	for _, rj := range p.Rejected() {
		if rj.Group == group {
			if patched[rj.Type] == nil {
				patched[rj.Type] = map[string]bool{}
			}
			patched[rj.Type][rj.Name] = true
		}
	}
	out := &Output{Resources: map[string][]proto.Message{}, Statuses: p.Statuses()}
	for url, ms := range ByType(r) {
		for _, m := range ms {
			name := xdsres.ResourceName(m)
			res := served[url][name]
			switch {
			case res == nil:
			case patched[url][name]:
				out.Resources[url] = append(out.Resources[url], res.Decoded())
			default:
				out.Resources[url] = append(out.Resources[url], m)
			}
		}
	}
	return out, nil
}

// ByType groups a translation's resources by type URL, leaving out empty
// types.
func ByType(r *translator.Resources) map[string][]proto.Message { return xdscheck.ByType(r) }

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

// document is the printed form of an Output. Field order is the order of
// the JSON output; YAML sorts keys, which keeps the same order here.
type document struct {
	Resources      map[string][]json.RawMessage `json:"resources"`
	SourceProblems []string                     `json:"sourceProblems,omitempty"`
	Statuses       []statusDoc                  `json:"statuses"`
}

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

// Encode prints the output as "yaml" or "json". Private keys are redacted:
// render output ends up in terminals, tickets and golden files.
func (o *Output) Encode(format string) ([]byte, error) {
	doc := document{Resources: map[string][]json.RawMessage{}, SourceProblems: o.SourceProblems, Statuses: []statusDoc{}}
	for url, msgs := range o.Resources {
		for _, m := range msgs {
			raw, err := canonicalJSON(m)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", url, err)
			}
			doc.Resources[url] = append(doc.Resources[url], raw)
		}
	}
	for _, st := range o.Statuses {
		doc.Statuses = append(doc.Statuses, statusDoc{
			Kind: st.Key.Kind.String(), Namespace: st.Key.Namespace, Name: st.Key.Name,
			CurrentStatus: st.State, Description: st.Description, Errors: st.Errors, Warnings: st.Warnings,
			Programmed: ProgrammedOf(o.Programmed, st.Key),
		})
	}
	j, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	switch format {
	case "json":
		return append(j, '\n'), nil
	case "", "yaml":
		return yaml.JSONToYAML(j)
	}
	return nil, fmt.Errorf("unknown output format %q: use yaml or json", format)
}

// canonicalJSON renders a resource as JSON with sorted keys and no
// insignificant whitespace; protojson's own output is deliberately
// unstable, and golden files must not be.
func canonicalJSON(m proto.Message) (json.RawMessage, error) {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	redactKeys(v)
	return json.Marshal(v)
}

// redactKeys replaces every private_key's inline bytes.
func redactKeys(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if k == "private_key" {
				t[k] = map[string]any{"inline_bytes": "REDACTED"}
				continue
			}
			redactKeys(e)
		}
	case []any:
		for _, e := range t {
			redactKeys(e)
		}
	}
}
