package xdscheck

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/perf"
)

// BenchmarkInspectListeners inspects every listener of a 1k directory
// shape's groups, as the gate records them in a first build, with the
// memo of clean Anys emptied before each round: most are the gRPC
// hosts' server listeners.
func BenchmarkInspectListeners(b *testing.B) {
	var ms []proto.Message
	for _, r := range directoryShape(b, 1000) {
		for _, l := range r.Listeners {
			ms = append(ms, l)
		}
	}
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
	b.ReportMetric(float64(len(ms)), "listeners")
}
