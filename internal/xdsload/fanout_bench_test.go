package xdsload

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-dev/switchyard/internal/perf"
)

// BenchmarkLargeFanOut opens 1,000 delta ADS streams on loopback against a
// control plane serving 10,000 proxies. Each is a proxyless gRPC client
// following two hosts, one of them shared by all. It reports the initial
// sync (per stream, from its opening to the last resource its listeners
// lead to; and for all of them, from the first opening), then changes one
// endpoint of the shared host per iteration and reports the time from the
// change to its arrival on each stream, and the bytes each received for
// it. Client and server share the machine's cores.
func BenchmarkLargeFanOut(b *testing.B) {
	perf.RequireLarge(b)
	const streams = 1000
	s := serve(b, 10000)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	c, err := Start(ctx, Config{Target: s.addr, Streams: streams, Listeners: s.listeners})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	synced, err := c.WaitSynced(ctx)
	if err != nil {
		b.Fatal(err)
	}
	all := time.Since(start)
	sync := perf.Latencies(synced)

	var lat perf.Latencies
	var bytes, n int
	ready := false
	for b.Loop() {
		from := c.Versions(typeEndpoint, s.cla)
		t0 := time.Now()
		s.flip(b, ready)
		ready = !ready
		receipts, err := c.WaitChanged(ctx, typeEndpoint, s.cla, from)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range receipts {
			lat = append(lat, r.At.Sub(t0))
			bytes += r.Bytes
			n++
		}
	}
	lat.Report(b, "fanout")
	sync.Report(b, "sync")
	b.ReportMetric(float64(all)/float64(time.Millisecond), "sync-all-ms")
	b.ReportMetric(float64(bytes)/float64(n), "bytes/stream")
	b.ReportMetric(float64(lat.Percentile(100))/float64(time.Millisecond), "fanout-max-ms")
}
