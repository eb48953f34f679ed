package switchyard

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
)

// Switchyard is the plugin: a CoreDNS handler answering from the data of
// an xDS client. Build it with New; Start connects, Stop disconnects.
type Switchyard struct {
	// Next is the next plugin, for fallthrough.
	Next plugin.Handler

	cfg    Config
	table  atomic.Pointer[table]
	client *client
	// zones are cfg.Zones by name; ttl is cfg.TTL in seconds.
	zones map[string]*zone
	ttl   uint32

	mu      sync.Mutex
	started bool
	cancel  context.CancelFunc
	done    chan struct{}
}

var log = clog.NewWithPlugin(pluginName)

// New validates cfg and returns the plugin, not yet connected. It does not
// need a caddy.Controller: another plugin embeds Switchyard by calling New
// with a Config (DefaultConfig or ParseString give one), Start and Stop
// with its own lifecycle, and ServeDNS or Pick per query.
func New(cfg Config) (*Switchyard, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Switchyard{cfg: cfg, zones: make(map[string]*zone, len(cfg.Zones)), ttl: uint32(cfg.TTL / time.Second)}
	for _, z := range cfg.Zones {
		s.zones[z] = newZone(z)
	}
	s.client = &client{
		cfg:     cfg,
		state:   newXDSState(newNode(cfg.Node)),
		log:     log,
		metrics: &clientMetrics{label: cfg.controlPlaneLabel()},
		publish: s.table.Store,
		current: s.table.Load,
	}
	return s, nil
}

// Name implements plugin.Handler.
func (s *Switchyard) Name() string { return pluginName }

// Start opens the xDS stream in the background; it returns at once.
// Answers are SERVFAIL until the first data arrives (see Ready).
func (s *Switchyard) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("switchyard: already started")
	}
	if err := s.client.dial(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.started, s.cancel, s.done = true, cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		s.client.run(ctx)
	}()
	return nil
}

// Stop closes the stream and waits for the client to end. The last data
// stays answerable.
func (s *Switchyard) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	<-s.done
	s.client.close()
	s.cancel = nil
	return nil
}

// Ready implements the ready plugin's Readiness: true once the clusters
// and their endpoints have been received and applied (or the initial fetch
// timeout passed after the clusters arrived), and from then on, even while
// the control plane is unreachable, since the last good data is answered.
func (s *Switchyard) Ready() bool { return s.client.ready.Load() }

// Pick returns an endpoint of the cluster with the given name (the DNS
// name below the zone, e.g. "web.shop"), of IPv6 or IPv4, picked as an
// A/AAAA answer is. It is for plugins that embed this one.
func (s *Switchyard) Pick(name string, ipv6 bool) (netip.AddrPort, bool) {
	t := s.table.Load()
	if t == nil {
		return netip.AddrPort{}, false
	}
	e := t.entries[name]
	if e == nil || e.cluster.cname != "" {
		// A CNAME has no endpoint to pick.
		return netip.AddrPort{}, false
	}
	f := familyV4
	if ipv6 {
		f = familyV6
	}
	ep := e.pickers[f].pick()
	if ep == nil {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(ep.addr, ep.port), true
}
