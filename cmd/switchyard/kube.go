package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/k8ssource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/server"
	"github.com/switchyard-dev/switchyard/internal/status"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// kubeOptions are serve's flags for reading from a Kubernetes API server.
type kubeOptions struct {
	kubeconfig      string
	watchNamespaces []string
	leaderElect     bool
	leaseNamespace  string
	leaseName       string
	leaseDuration   time.Duration
	renewDeadline   time.Duration
	retryPeriod     time.Duration
}

// kube holds the flags of the serve command being run.
var kube kubeOptions

func init() { serveFlags = append(serveFlags, addKubeFlags) }

func addKubeFlags(f *pflag.FlagSet, _ *server.Config) {
	kube = kubeOptions{
		leaderElect:   true,
		leaseName:     "switchyard",
		leaseDuration: status.DefaultLeaseDuration,
		renewDeadline: status.DefaultRenewDeadline,
		retryPeriod:   status.DefaultRetryPeriod,
	}
	f.StringVar(&kube.kubeconfig, "kubeconfig", "", "read objects from the Kubernetes API server of this kubeconfig file and write their status back; in a pod, serve does so by default with the pod's service account")
	f.StringSliceVar(&kube.watchNamespaces, "watch-namespaces", nil, "namespaces to read HTTPProxies, Services, EndpointSlices, Secrets, ... from; empty reads all")
	f.BoolVar(&kube.leaderElect, "leader-elect", kube.leaderElect, "write status only while holding a Lease, so that replicas take turns; every replica serves xDS either way")
	f.StringVar(&kube.leaseNamespace, "leader-election-namespace", "", "namespace of the leader Lease (default: the pod's, or the kubeconfig context's)")
	f.StringVar(&kube.leaseName, "leader-election-name", kube.leaseName, "name of the leader Lease")
	f.DurationVar(&kube.leaseDuration, "leader-election-lease-duration", kube.leaseDuration, "how long followers wait after the leader's last renewal before taking over")
	f.DurationVar(&kube.renewDeadline, "leader-election-renew-deadline", kube.renewDeadline, "how long the leader tries to renew before it stops writing status")
	f.DurationVar(&kube.retryPeriod, "leader-election-retry-period", kube.retryPeriod, "how often replicas try to acquire or renew the Lease")
}

// inCluster reports whether this process runs in a Kubernetes pod with a
// service account.
func inCluster() bool {
	if os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		return false
	}
	_, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/token")
	return err == nil
}

// useKube reports whether serve reads from an API server: with
// --kubeconfig, or in a pod unless --source says otherwise.
func useKube(source string) (bool, error) {
	if kube.kubeconfig != "" && source != "" {
		return false, usageError("give --kubeconfig or --source, not both")
	}
	return kube.kubeconfig != "" || (source == "" && inCluster()), nil
}

// serveKube runs the control plane on the API server's objects, writing
// their status back.
func serveKube(ctx context.Context, cfg server.Config, log *slog.Logger) error {
	routeKlog(log)
	rc, ns, err := loadKubeconfig(kube.kubeconfig)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	c, err := newController(kube, cfg, rc, ns, log)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if err := c.run(ctx); err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

var klogOnce sync.Once

// routeKlog sends client-go's logs (klog) where everything else goes. klog
// must be set up before any client-go goroutine starts, once.
func routeKlog(log *slog.Logger) {
	klogOnce.Do(func() { klog.SetSlogLogger(log) })
}

// loadKubeconfig returns the client configuration of a kubeconfig file
// (the usual $KUBECONFIG and ~/.kube/config rules when path is empty, then
// the pod's service account) and the namespace it names.
func loadKubeconfig(path string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("loading the Kubernetes client configuration: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("reading the namespace of the Kubernetes client configuration: %w", err)
	}
	return rc, ns, nil
}

// controller is serve on a Kubernetes API server: informers, the control
// plane, and the status writer.
type controller struct {
	server *server.Server
	source *k8ssource.Source
	status *status.Writer
}

// newController wires a controller; defaultNS is where the Lease lives
// unless opts names a namespace.
func newController(opts kubeOptions, cfg server.Config, rc *rest.Config, defaultNS string, log *slog.Logger) (*controller, error) {
	rc = rest.CopyConfig(rc)
	rc.UserAgent = "switchyard"
	if version != "" {
		rc.UserAgent += "/" + version
	}
	if rc.QPS == 0 {
		rc.QPS, rc.Burst = 50, 100
	}
	if cfg.Registry == nil {
		cfg.Registry = server.NewRegistry()
	}
	var pinned []types.NamespacedName
	if fc := cfg.Pipeline.DAG.FallbackCertificate; fc != nil {
		pinned = append(pinned, *fc)
	}
	src, err := k8ssource.New(k8ssource.Config{REST: rc, Namespaces: opts.watchNamespaces, Mesh: cfg.Pipeline.DAG.Mesh, Secrets: pinned, Log: log})
	if err != nil {
		return nil, err
	}
	election := status.Election{
		Disabled:      !opts.leaderElect,
		Namespace:     opts.leaseNamespace,
		Name:          opts.leaseName,
		Identity:      identity(),
		LeaseDuration: opts.leaseDuration,
		RenewDeadline: opts.renewDeadline,
		RetryPeriod:   opts.retryPeriod,
	}
	if election.Namespace == "" {
		election.Namespace = os.Getenv("POD_NAMESPACE")
	}
	if election.Namespace == "" {
		election.Namespace = defaultNS
	}
	w, err := status.New(status.Config{REST: rc, Objects: src.Get, Election: election, Registry: cfg.Registry, Log: log})
	if err != nil {
		return nil, err
	}
	if prev := cfg.OnStatuses; prev != nil {
		cfg.OnStatuses = func(u dag.StatusUpdate) { prev(u); w.Apply(u) }
	} else {
		cfg.OnStatuses = w.Apply
	}
	// The Programmed condition reflects the nodes connected to this
	// replica; the leader's writer is the one that writes it.
	if prev := cfg.OnProgrammed; prev != nil {
		cfg.OnProgrammed = func(m map[objects.Key]xdsres.Programmed) { prev(m); w.SetProgrammed(m) }
	} else {
		cfg.OnProgrammed = w.SetProgrammed
	}
	cfg.Log = log
	return &controller{server: server.New(cfg), source: src, status: w}, nil
}

// run serves until ctx is done; on return the Lease is released.
func (c *controller) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	werr := make(chan error, 1)
	go func() { werr <- c.status.Run(ctx) }()
	err := c.server.Run(ctx, withStartupGC(c.source))
	cancel()
	if serr := <-werr; err == nil {
		err = serr
	}
	return err
}

// identity names this replica in the Lease: the pod name (or host name)
// and a random suffix, so a restarted pod is a new candidate.
func identity() string {
	name := os.Getenv("POD_NAME")
	if name == "" {
		name, _ = os.Hostname()
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return name + "_" + hex.EncodeToString(b)
}
