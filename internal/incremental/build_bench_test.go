package incremental

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/perf"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// BenchmarkFullBuild builds everything from a snapshot of generated
// objects (scalegen.Defaults at each size): the DAG, the translation for
// all three groups, the encoding and the versions of every resource. It
// also reports the floor, the time to encode that same output once
// (each distinct resource, with the encoder the build uses, and with
// protobuf-go's reflection-based one), and the ratio of the two.
//
// The shape=issue sub-benchmarks use the shape of issue 15, which no
// benchmark here was tuned to: n root proxies plus n/10 included ones, 3
// weighted Services per route, 3 endpoints per Service in 2 zones.
//
// The gogc=400 sub-benchmarks run the same builds with the collector's
// target serve and render set for their first build (startupGOGC in
// cmd/switchyard): that is the figure a user meets at start-up, while the
// others, at the default (or the GOGC of the environment), are the
// figure of a build after it.
func BenchmarkFullBuild(b *testing.B) {
	sizes := func(b *testing.B, shape func(int) scalegen.Config) {
		for _, n := range []int{1000, 10000} {
			b.Run("proxies="+perf.Size(n), func(b *testing.B) { benchFullBuild(b, shape(n)) })
		}
	}
	sizes(b, defaultShape)
	b.Run("gogc=400", func(b *testing.B) { withGOGC(b, 400, func() { sizes(b, defaultShape) }) })
	b.Run("shape=issue", func(b *testing.B) {
		sizes(b, issueShape)
		b.Run("gogc=400", func(b *testing.B) { withGOGC(b, 400, func() { sizes(b, issueShape) }) })
	})
}

// withGOGC runs fn with the collector's target at percent and restores
// the previous one after, so that no other benchmark runs at it.
func withGOGC(b *testing.B, percent int, fn func()) {
	b.Helper()
	prev := debug.SetGCPercent(percent)
	defer debug.SetGCPercent(prev)
	fn()
}

// BenchmarkLargeFullBuild is BenchmarkFullBuild at 50,000 proxies.
func BenchmarkLargeFullBuild(b *testing.B) {
	perf.RequireLarge(b)
	b.Run("proxies=50k", func(b *testing.B) { benchFullBuild(b, defaultShape(50000)) })
	b.Run("shape=issue/proxies=50k", func(b *testing.B) { benchFullBuild(b, issueShape(50000)) })
}

func defaultShape(proxies int) scalegen.Config {
	cfg := scalegen.Defaults()
	cfg.Proxies = proxies
	return cfg
}

// issueShape is `switchyard gen --proxies 1.1×roots --included roots/10
// --routes-per-proxy 2 --services-per-route 3 --endpoints-per-service 3
// --zones 2 --tls-fraction 0.5`.
func issueShape(roots int) scalegen.Config {
	cfg := scalegen.Defaults()
	cfg.Proxies, cfg.Included = roots+roots/10, roots/10
	cfg.RoutesPerProxy, cfg.ServicesPerRoute = 2, 3
	cfg.EndpointsPerService, cfg.Zones = 3, 2
	cfg.TLSFraction = 0.5
	return cfg
}

func generated(b *testing.B, cfg scalegen.Config) (*objects.Snapshot, []objects.Key) {
	b.Helper()
	set, err := scalegen.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return set.Snapshot(), keysOfChanges(set.Changes())
}

func benchFullBuild(b *testing.B, shape scalegen.Config) {
	snap, keys := generated(b, shape)
	proxies := shape.Proxies
	cfg := Config{Translator: translator.DefaultOptions()}
	var e *Engine
	var before, after runtime.MemStats
	// The generator's garbage is not the build's: without a collection
	// here the first cycle, which marks it, would be paid for by the build.
	runtime.GC()
	runtime.ReadMemStats(&before)
	cpu := perf.StartCPU()
	n := 0
	for b.Loop() {
		e = New(snap, cfg)
		if _, err := e.Update(Changes{Objects: keys}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	cpu.Report(b, n)
	runtime.ReadMemStats(&after)
	full := b.Elapsed() / time.Duration(n)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n)/float64(proxies), "allocs/proxy")

	msgs, size := distinctMessages(e)
	floor := marshalFloor(b, msgs, xdsres.Marshal)
	reflect := marshalFloor(b, msgs, func(m proto.Message) ([]byte, error) {
		return proto.MarshalOptions{Deterministic: true}.Marshal(m)
	})
	b.ReportMetric(float64(len(msgs)), "resources")
	b.ReportMetric(float64(size)/1e6, "encoded-MB")
	b.ReportMetric(float64(floor)/1e6, "floor-ms")
	b.ReportMetric(float64(reflect)/1e6, "floor-reflect-ms")
	b.ReportMetric(float64(full)/float64(floor), "full/floor")
}

// distinctMessages lists every resource the engine serves, decoded, once
// even when several groups share it, and their encoded size.
func distinctMessages(e *Engine) ([]proto.Message, int) {
	seen := map[*xdsres.Resource]bool{}
	var out []proto.Message
	size := 0
	for _, g := range xdsres.Groups {
		for _, byName := range e.Targets(g) {
			for _, r := range byName.All() {
				if !seen[r] {
					seen[r] = true
					out = append(out, r.Decoded())
					size += len(r.Any.Value)
				}
			}
		}
	}
	return out, size
}

// marshalFloor returns the best of three times to encode every message
// once, after a collection so that no earlier garbage is paid for.
func marshalFloor(b *testing.B, msgs []proto.Message, marshal func(proto.Message) ([]byte, error)) time.Duration {
	b.Helper()
	best := time.Duration(0)
	for range 3 {
		runtime.GC()
		start := time.Now()
		for _, m := range msgs {
			if _, err := marshal(m); err != nil {
				b.Fatal(err)
			}
		}
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
	}
	return best
}

// BenchmarkProducedEveryProxy lists what every proxy of a built 10k issue
// shape produced, as the server's Programmed evaluation does after each
// burst of acknowledgements (evaluateProgrammed in internal/server).
func BenchmarkProducedEveryProxy(b *testing.B) {
	snap, keys := generated(b, issueShape(10000))
	e := New(snap, Config{Translator: translator.DefaultOptions()})
	if _, err := e.Update(Changes{Objects: keys}); err != nil {
		b.Fatal(err)
	}
	var proxies []objects.Key
	for _, k := range keys {
		if k.Kind == objects.KindHTTPProxy {
			proxies = append(proxies, k)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, k := range proxies {
			if len(e.Produced(k)) == 0 {
				b.Fatalf("%v produced nothing", k)
			}
		}
	}
}
