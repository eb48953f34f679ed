// Package server runs a Switchyard control plane: a source of objects, the
// build loop that coalesces their changes into builds, the xDS gRPC server
// and the admin endpoint. It is where the I/O lives; the stages it drives
// (pipeline, DAG, translator) are plain function calls.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/switchyard-dev/switchyard/internal/admin"
	"github.com/switchyard-dev/switchyard/internal/console"
	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/pipeline"
	"github.com/switchyard-dev/switchyard/internal/xdscache"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Source delivers objects. Start returns once the source has its first
// complete view (a directory read, informers synced); Run then delivers
// changes until ctx is done. A source that can hand that view over in
// parts while it reads it implements WarmSource too.
type Source interface {
	Start(ctx context.Context) ([]objects.Change, error)
	Run(ctx context.Context, emit func([]objects.Change)) error
}

// Config configures a control plane.
type Config struct {
	// XDSAddress and AdminAddress are host:port; port 0 picks one.
	XDSAddress   string
	AdminAddress string
	// Holdoff is how long the loop waits after a change for more; MaxWait
	// bounds how long a change may wait in total during a burst.
	Holdoff time.Duration
	MaxWait time.Duration
	// Pipeline configures the builds; its Metrics and Log are set here.
	Pipeline pipeline.Config
	// GRPCOptions are added to the xDS server's (TLS credentials, say).
	GRPCOptions []grpc.ServerOption
	// XDSOptions configure the xDS service (a group authorizer, say).
	XDSOptions []xdscache.Option
	// OnStatuses, when set, receives what each build changed in the
	// statuses (all of them after the first build).
	OnStatuses func(dag.StatusUpdate)
	// ReadyDetail, when set, adds a line about the source to /readyz.
	ReadyDetail func() string
	// OnProgrammed, when set, receives the Programmed condition of every
	// HTTPProxy and ExtensionService whenever what the connected nodes
	// acknowledged may have changed it. It is called on the build loop and
	// must not block.
	OnProgrammed func(map[objects.Key]xdsres.Programmed)
	Log          *slog.Logger
	// Registry receives the metrics; a new one when nil.
	Registry *prometheus.Registry
}

// DefaultHoldoff and DefaultMaxWait coalesce an editor's or a deploy's
// burst of changes into one build while keeping a lone change fast.
const (
	DefaultHoldoff = 100 * time.Millisecond
	DefaultMaxWait = time.Second
)

// Server is a running control plane.
type Server struct {
	cfg     Config
	cache   *xdscache.Cache
	pipe    *pipeline.Pipeline
	state   atomic.Pointer[admin.State]
	ready   atomic.Bool
	xdsAddr atomic.Pointer[net.Addr]
	// xdsLis is open from ListenXDS; clients that connect before the
	// first build wait in its backlog until Run serves them.
	xdsLis net.Listener
	// next is when the pipeline's next stage is due. build sets it and
	// loop reads it, never at once: Run builds once before it starts the
	// loop, and every later build runs inside the loop.
	next time.Time
	// logged is the last status logged per object (build loop only).
	logged   map[objects.Key]string
	adminLis net.Listener
	// acks is what every stream acknowledged; programmed the conditions
	// last published from it. programmedTook is how long working them out
	// took, and pendingSince when each object started waiting for ACKs
	// (build loop only).
	acks           *xdscache.Acks
	programmed     atomic.Pointer[map[objects.Key]xdsres.Programmed]
	programmedTook time.Duration
	pendingSince   map[objects.Key]time.Time
	// clients records the open xDS streams for the web console.
	clients *console.Clients
}

// NewRegistry returns the registry New uses when Config.Registry is nil:
// the Go runtime's and the process's metrics, ready for the control
// plane's. A caller that adds metrics of its own (the status writer's)
// makes it first and passes it in Config.
func NewRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// New prepares a control plane; nothing listens until Run.
func New(cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = NewRegistry()
	}
	if cfg.Holdoff <= 0 {
		cfg.Holdoff = DefaultHoldoff
	}
	if cfg.MaxWait < cfg.Holdoff {
		cfg.MaxWait = max(DefaultMaxWait, cfg.Holdoff)
	}
	cfg.Pipeline.Log = cfg.Log
	cfg.Pipeline.Metrics = pipeline.NewMetrics(cfg.Registry)
	c := xdscache.New()
	return &Server{cfg: cfg, cache: c, pipe: pipeline.New(c, cfg.Pipeline), logged: map[objects.Key]string{}, acks: xdscache.NewAcks(), clients: console.NewClients()}
}

// Cache returns the resource cache, for tests and embedding.
func (s *Server) Cache() *xdscache.Cache { return s.cache }

// XDSAddr returns the address the xDS server listens on, nil until it
// does.
func (s *Server) XDSAddr() net.Addr {
	if p := s.xdsAddr.Load(); p != nil {
		return *p
	}
	return nil
}

// AdminAddr returns the admin endpoint's address once Run has started.
func (s *Server) AdminAddr() net.Addr {
	if s.adminLis == nil {
		return nil
	}
	return s.adminLis.Addr()
}

// ListenAdmin opens the admin endpoint's listener; Run calls it when the
// caller has not, so that probes answer (not ready) during the first sync.
func (s *Server) ListenAdmin() error {
	if s.adminLis != nil || s.cfg.AdminAddress == "" {
		return nil
	}
	l, err := net.Listen("tcp", s.cfg.AdminAddress)
	if err != nil {
		return fmt.Errorf("admin endpoint: %w (pick another --admin-address)", err)
	}
	s.adminLis = l
	return nil
}

// ListenXDS opens the xDS server's listener and returns its address; Run
// calls it when the caller has not. Clients may connect at once: they
// wait, connected, until the first build is in the cache, and are answered
// from it.
func (s *Server) ListenXDS() (net.Addr, error) {
	if s.xdsLis == nil {
		l, err := net.Listen("tcp", s.cfg.XDSAddress)
		if err != nil {
			return nil, fmt.Errorf("xDS server: %w (pick another --xds-address)", err)
		}
		s.xdsLis = l
	}
	return s.xdsLis.Addr(), nil
}

// Run starts the source, builds once, then serves xDS until ctx is done.
// The xDS port is open from the start, so that clients connect while the
// source syncs and the first build runs, but nothing is answered before
// that build is in the cache: a restarted control plane never serves an
// empty configuration. XDSAddr is nil until the first build is served and
// its statuses are published.
func (s *Server) Run(ctx context.Context, src Source) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.ListenAdmin(); err != nil {
		return err
	}
	if _, err := s.ListenXDS(); err != nil {
		return err
	}
	errc := make(chan error, 4)
	if s.adminLis != nil {
		hs := s.adminServer()
		go func() { errc <- serveHTTP(hs, s.adminLis) }()
		defer shutdownHTTP(hs)
	}
	res, n, err := s.start(ctx, src)
	if err != nil {
		s.xdsLis.Close()
		return err
	}
	gs := s.serveXDS(ctx, errc)
	defer stopGRPC(gs)
	s.report(res, n)
	addr := s.xdsLis.Addr()
	s.xdsAddr.Store(&addr)
	s.ready.Store(true)
	s.cfg.Log.Info("serving xDS", "address", s.XDSAddr().String())

	batches := make(chan []objects.Change, 64)
	go func() { errc <- src.Run(ctx, func(b []objects.Change) { sendBatch(ctx, batches, b) }) }()
	go func() { errc <- s.loop(ctx, batches) }()
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
}

func sendBatch(ctx context.Context, ch chan<- []objects.Change, b []objects.Change) {
	if len(b) == 0 {
		return
	}
	select {
	case ch <- b:
	case <-ctx.Done():
	}
}

// serveXDS serves xDS on the listener of ListenXDS.
func (s *Server) serveXDS(ctx context.Context, errc chan<- error) *grpc.Server {
	l := s.xdsLis
	opts := append([]grpc.ServerOption{
		// Clients ping to keep long-lived streams through NATs and load
		// balancers; allow that instead of closing them as abusive.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
		grpc.ChainStreamInterceptor(s.clients.StreamInterceptor),
	}, s.cfg.GRPCOptions...)
	gs := grpc.NewServer(opts...)
	xdsOpts := append([]xdscache.Option{xdscache.WithAcks(s.acks)}, s.cfg.XDSOptions...)
	xdscache.Register(ctx, gs, s.cache, xdscache.NewMetrics(s.cfg.Registry), s.cfg.Log, xdsOpts...)
	s.cfg.Registry.MustRegister(xdscache.NewEndpointCollector(s.cache))
	go func() { errc <- gs.Serve(l) }()
	return gs
}

func stopGRPC(gs *grpc.Server) {
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		gs.Stop()
	}
}

func (s *Server) adminServer() *http.Server {
	// Requests that never end by themselves (the console's event streams)
	// end when the server shuts down, instead of holding Shutdown until
	// its timeout.
	ctx, cancel := context.WithCancel(context.Background())
	hs := &http.Server{
		BaseContext: func(net.Listener) context.Context { return ctx },
		Handler: admin.Handler(admin.Config{
			Ready:      s.ready.Load,
			State:      s.state.Load,
			Cache:      s.cache,
			Gatherer:   s.cfg.Registry,
			Detail:     s.cfg.ReadyDetail,
			Programmed: s.Programmed,
			Clients:    s.clients,
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	hs.RegisterOnShutdown(cancel)
	return hs
}

func serveHTTP(hs *http.Server, l net.Listener) error {
	if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("admin endpoint: %w", err)
	}
	return nil
}

func shutdownHTTP(hs *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(ctx)
}
