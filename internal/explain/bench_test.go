package explain_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/explain"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// BenchmarkExplain measures, on a generated tree of 2,000 proxies, what
// the admin endpoint pays per request: indexing every resource of the
// group, then one explanation.
func BenchmarkExplain(b *testing.B) {
	cfg := scalegen.Defaults()
	cfg.Proxies = 2000
	set, err := scalegen.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	out, err := render.Run(set.Snapshot(), render.Options{Translator: translator.DefaultOptions(), Group: "envoy"})
	if err != nil {
		b.Fatal(err)
	}
	var msgs []proto.Message
	for _, ms := range out.Resources {
		msgs = append(msgs, ms...)
	}
	req := explain.Request{URL: "http://app-1.team-0.example.com/"}
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			explain.NewResources(msgs)
		}
	})
	res := explain.NewResources(msgs)
	b.Run("explain", func(b *testing.B) {
		for b.Loop() {
			r, err := explain.Explain(res, req)
			if err != nil || r.Decision.Kind != explain.KindForward {
				b.Fatalf("%v %+v", err, r.Decision)
			}
		}
	})
}
