package pipeline

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
	"google.golang.org/protobuf/proto"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/perf"
	"github.com/switchyard-dev/switchyard/internal/scalegen"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
)

// built returns a pipeline that has built scalegen.Defaults at the given
// size, the generated set, and the cache it feeds.
func built(b *testing.B, proxies int) (*Pipeline, *scalegen.Set, *xdscache.Cache, *clock) {
	b.Helper()
	cfg := scalegen.Defaults()
	cfg.Proxies = proxies
	set, err := scalegen.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	c := newClock()
	cache := xdscache.New()
	p := New(cache, Config{Translator: translator.DefaultOptions(), Now: c.now})
	if _, err := p.Apply(set.Changes()); err != nil {
		b.Fatal(err)
	}
	return p, set, cache, c
}

// BenchmarkOneProxyChanged measures one HTTPProxy changed among many, from
// the event to the changed resources in the cache, ready to send: the
// first root with TLS and a team proxy gets a new response timeout on one
// route, which changes its route configurations in the envoy and grpc
// groups (the plain-HTTP one only redirects).
func BenchmarkOneProxyChanged(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run("proxies="+perf.Size(n), func(b *testing.B) { benchOneProxy(b, n) })
	}
}

// BenchmarkLargeOneProxyChanged is BenchmarkOneProxyChanged at 50,000
// proxies.
func BenchmarkLargeOneProxyChanged(b *testing.B) {
	perf.RequireLarge(b)
	b.Run("proxies=50k", func(b *testing.B) { benchOneProxy(b, 50000) })
}

func benchOneProxy(b *testing.B, proxies int) {
	p, set, _, c := built(b, proxies)
	var base *switchyardv1.HTTPProxy
	for _, o := range set.Objects {
		if hp, ok := o.(*switchyardv1.HTTPProxy); ok && hp.Spec.VirtualHost != nil && hp.Spec.VirtualHost.TLS != nil && len(hp.Spec.Includes) > 0 {
			base = hp
			break
		}
	}
	var lat perf.Latencies
	cpu := perf.StartCPU()
	i := 0
	for b.Loop() {
		i++
		q := base.DeepCopy()
		q.Generation += int64(i)
		q.Spec.Routes[0].TimeoutPolicy = &switchyardv1.TimeoutPolicy{Response: fmt.Sprintf("%ds", 10+i%2)}
		c.add(time.Millisecond)
		start := time.Now()
		if _, err := p.Apply([]objects.Change{{Key: objects.NewKey(objects.KindHTTPProxy, types.NamespacedName{Namespace: q.Namespace, Name: q.Name}), Object: q}}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	cpu.Report(b, i)
	lat.Report(b, "")
}

// BenchmarkLargeEndpointChange measures one EndpointSlice changed among
// 50,000 clusters (25,000 proxies of two routes): from the event to the
// delta response written for every stream subscribed to the changed load
// assignment (built by the cache and encoded, as the server would). Ten
// Envoy streams subscribe, as Envoy does, to the load assignment of every
// cluster; 100 other streams each to one other assignment. It reports the
// bytes and resources each Envoy stream got, how many responses the others
// got (none is right), and how long each Envoy stream's next request (its
// ACK, which opens the next watch) takes the cache.
func BenchmarkLargeEndpointChange(b *testing.B) {
	perf.RequireLarge(b)
	p, set, cache, _ := built(b, 25000)
	var es *discoveryv1.EndpointSlice
	for _, o := range set.Objects {
		if s, ok := o.(*discoveryv1.EndpointSlice); ok && s.Namespace == "team-0" {
			es = s
			break
		}
	}
	svc, _ := objects.SliceService(objects.CompactSlice(es))
	var all []string
	var other string
	for _, c := range p.DAG().Clusters {
		all = append(all, c.Name)
		if c.Spec.Backends[0].Service != svc && other == "" {
			other = c.Name
		}
	}
	clusters := len(all)
	subscribed := openWatches(b, cache, all, 10)
	others := openWatches(b, cache, []string{other}, 100)

	var lat, rearm perf.Latencies
	var bytes, resources, stray int
	cpu := perf.StartCPU()
	i := 0
	for b.Loop() {
		i++
		next := es.DeepCopy()
		next.Endpoints[0].Conditions.Ready = ptr(i%2 == 0)
		start := time.Now()
		if _, err := p.Apply([]objects.Change{{Key: objects.NewKey(objects.KindEndpointSlice, types.NamespacedName{Namespace: es.Namespace, Name: es.Name}), Object: next}}); err != nil {
			b.Fatal(err)
		}
		for _, w := range subscribed {
			n, size := w.take(b)
			resources += n
			bytes += size
		}
		lat = append(lat, time.Since(start))
		for _, w := range others {
			stray += w.pending()
		}
		// Each stream's next request (its ACK) opens the next watch.
		for _, w := range subscribed {
			start := time.Now()
			w.arm(b)
			rearm = append(rearm, time.Since(start))
		}
	}
	cpu.Report(b, i)
	lat.Report(b, "")
	rearm.Report(b, "ack")
	b.ReportMetric(float64(bytes)/float64(i*len(subscribed)), "bytes/client")
	b.ReportMetric(float64(resources)/float64(i*len(subscribed)), "resources/client")
	b.ReportMetric(float64(stray), "responses-to-others")
	b.ReportMetric(float64(clusters), "clusters")
}

// watch is one in-process delta stream subscribed to load assignments.
type watch struct {
	cache *xdscache.Cache
	req   *envoy_service_discovery_v3.DeltaDiscoveryRequest
	sub   stream.Subscription
	ch    chan cache.DeltaResponse
	nonce int
	// cancel is the last watch's; the server calls it when the stream's
	// next request comes, before it opens the next watch.
	cancel func()
}

func openWatches(b *testing.B, c *xdscache.Cache, names []string, n int) []*watch {
	b.Helper()
	out := make([]*watch, n)
	for i := range out {
		w := &watch{
			cache: c,
			req: &envoy_service_discovery_v3.DeltaDiscoveryRequest{
				Node:    &envoy_config_core_v3.Node{Id: fmt.Sprintf("envoy-%d", i), UserAgentName: "envoy"},
				TypeUrl: typeEndpoint,
			},
			sub: stream.NewDeltaSubscription(names, nil, nil, false),
			ch:  make(chan cache.DeltaResponse, 1),
		}
		w.arm(b)
		w.receive(b) // the initial response
		out[i] = w
	}
	return out
}

func (w *watch) arm(b *testing.B) {
	b.Helper()
	if w.cancel != nil {
		w.cancel()
	}
	cancel, err := w.cache.CreateDeltaWatch(w.req, w.sub, w.ch)
	if err != nil {
		b.Fatal(err)
	}
	w.cancel = cancel
}

// receive takes the response the cache answered with, encodes it as the
// server writes it, and opens the next watch.
func (w *watch) receive(b *testing.B) (resources, size int) {
	b.Helper()
	resources, size = w.take(b)
	w.arm(b)
	return resources, size
}

// take takes the response the cache answered with and encodes it as the
// server writes it, then records it as the server does.
func (w *watch) take(b *testing.B) (resources, size int) {
	b.Helper()
	var resp cache.DeltaResponse
	select {
	case resp = <-w.ch:
	default:
		b.Fatal("a subscribed stream got no response")
	}
	dr, err := resp.GetDeltaDiscoveryResponse()
	if err != nil {
		b.Fatal(err)
	}
	enc, err := proto.Marshal(dr)
	if err != nil {
		b.Fatal(err)
	}
	w.sub.SetReturnedResources(resp.GetNextVersionMap())
	w.nonce++
	w.req = proto.CloneOf(w.req)
	w.req.ResponseNonce = fmt.Sprint(w.nonce)
	w.req.ResourceNamesSubscribe = nil
	return len(dr.GetResources()), len(enc)
}

// pending reports whether the stream got a response, and takes it.
func (w *watch) pending() int {
	select {
	case <-w.ch:
		return 1
	default:
		return 0
	}
}

// BenchmarkLiveHeap measures the live heap after a full build, everything
// included — the objects, the engine's units, the resources and the cache
// — and the objects' own share. proxies=10k is scalegen.Defaults (two
// Services of five endpoints each per proxy: 100,000 endpoints), against
// the target of 10 KB per proxy and 0.5 KB per endpoint; roots=10k is
// scalegen.DirectoryShape, the shape of the directory benchmarks (10,000
// roots and 1,000 included proxies, 198,000 endpoints), against 250 MiB;
// roots=1k is that shape at a tenth of the size.
func BenchmarkLiveHeap(b *testing.B) {
	b.Run("proxies=10k", func(b *testing.B) {
		cfg := scalegen.Defaults()
		cfg.Proxies = 10000
		total := benchLiveHeap(b, cfg)
		b.ReportMetric(float64(total)/float64(cfg.Proxies*10240+100000*512), "heap/target")
	})
	b.Run("roots=1k", func(b *testing.B) { benchLiveHeap(b, scalegen.DirectoryShape(1000)) })
	b.Run("roots=10k", func(b *testing.B) {
		total := benchLiveHeap(b, scalegen.DirectoryShape(10000))
		b.ReportMetric(float64(total)/(250<<20), "heap/target")
	})
}

// BenchmarkLargeLiveHeap is BenchmarkLiveHeap's directory shape at 50,000
// roots.
func BenchmarkLargeLiveHeap(b *testing.B) {
	perf.RequireLarge(b)
	b.Run("roots=50k", func(b *testing.B) { benchLiveHeap(b, scalegen.DirectoryShape(50000)) })
}

// benchLiveHeap builds cfg's set through a pipeline and a cache, and
// reports the live heap it holds, in all and for the objects alone, which
// it returns.
func benchLiveHeap(b *testing.B, cfg scalegen.Config) uint64 {
	var total uint64
	for b.Loop() {
		base := perf.LiveHeap()
		set, err := scalegen.Generate(cfg)
		if err != nil {
			b.Fatal(err)
		}
		for i, o := range set.Objects {
			// As the directory source holds them without --mesh (the
			// set has no mesh): the generator's set keeps what a
			// manifest has, and a snapshot holds Services and slices
			// in forms of its own.
			if es, ok := o.(*discoveryv1.EndpointSlice); ok {
				set.Objects[i] = objects.CompactSlice(es)
				continue
			}
			objects.CompactWithoutMesh(o)
			set.Objects[i] = objects.Held(o)
		}
		changes := set.Changes()
		set = nil
		objs := perf.LiveHeap() - base
		p := New(xdscache.New(), Config{Translator: translator.DefaultOptions()})
		if _, err := p.Apply(changes); err != nil {
			b.Fatal(err)
		}
		total = perf.LiveHeap() - base
		perf.WriteHeapProfile(b)
		b.ReportMetric(float64(total)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(objs)/(1<<20), "objects-MiB")
		b.ReportMetric(float64(total)/float64(cfg.Proxies), "bytes/proxy")
		runtime.KeepAlive(p)
	}
	return total
}
