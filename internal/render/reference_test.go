package render

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"
)

// This file keeps the way render printed its output before it printed
// straight from protoreflect: every resource through protojson, decoded
// into maps, re-encoded with sorted keys, the whole document indented by
// encoding/json and, for YAML, converted by sigs.k8s.io/yaml. It is slow
// and plainly right; the tests hold the fast printer to its bytes.

// referenceDocument is the printed form of an Output, as it was.
type referenceDocument struct {
	Resources      map[string][]json.RawMessage `json:"resources"`
	SourceProblems []string                     `json:"sourceProblems,omitempty"`
	Statuses       []statusDoc                  `json:"statuses"`
}

func referenceEncode(o *Output, format string) ([]byte, error) {
	doc := referenceDocument{Resources: map[string][]json.RawMessage{}, SourceProblems: o.SourceProblems, Statuses: o.statusDocs()}
	for url, msgs := range o.Resources {
		for _, m := range msgs {
			raw, err := referenceJSON(m)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", url, err)
			}
			doc.Resources[url] = append(doc.Resources[url], raw)
		}
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

func referenceJSON(m proto.Message) (json.RawMessage, error) {
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
	referenceRedact(v)
	return json.Marshal(v)
}

func referenceRedact(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if k == "private_key" {
				t[k] = map[string]any{"inline_bytes": "REDACTED"}
				continue
			}
			referenceRedact(e)
		}
	case []any:
		for _, e := range t {
			referenceRedact(e)
		}
	}
}
