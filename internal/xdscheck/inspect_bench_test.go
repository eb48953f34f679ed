package xdscheck

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/perf"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// BenchmarkInspectListeners inspects every listener of a 1k directory
// shape's groups, as the gate records them in a first build, with the
// memo of clean Anys emptied before each round: most are the gRPC
// hosts' server listeners.
func BenchmarkInspectListeners(b *testing.B) {
	set, err := scalegen.Generate(scalegen.DirectoryShape(1000))
	if err != nil {
		b.Fatal(err)
	}
	snap := set.Snapshot()
	d := dag.Build(snap, dag.Options{}).DAG
	o := translator.DefaultOptions()
	var ms []proto.Message
	for _, r := range []*translator.Resources{translator.Envoy(d, snap, o), translator.GRPC(d, snap, o), translator.DNS(d, snap, o)} {
		for _, l := range r.Listeners {
			ms = append(ms, l)
		}
	}
	b.ReportMetric(float64(len(ms)), "listeners")
	cpu := perf.StartCPU()
	i := 0
	for b.Loop() {
		i++
		ForgetClean()
		for _, m := range ms {
			Inspect(m)
		}
	}
	cpu.Report(b, i)
}
