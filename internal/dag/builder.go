package dag

import (
	"sort"

	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// DefaultMaxIncludeDepth bounds include chains, so that a long or
// adversarial chain cannot make a build expensive.
const DefaultMaxIncludeDepth = 8

// Options are the controller-wide settings that change what a build makes
// of the same objects.
type Options struct {
	// IngressClassName selects the proxies served: those whose
	// spec.ingressClassName equals it ("" selects proxies without one).
	IngressClassName string
	// RootNamespaces restricts where root proxies may live; empty allows
	// every namespace.
	RootNamespaces []string
	// GlobalAuthorization, when set, applies an ExtensionService as the
	// authorization server of every secure virtual host that has none.
	GlobalAuthorization *types.NamespacedName
	// RateLimitService is the ExtensionService that global rate limits
	// ask; without it a global policy fails closed, or with
	// RateLimitFailOpen is dropped with a warning.
	RateLimitService  *types.NamespacedName
	RateLimitFailOpen bool
	// RateLimitDomain is sent with every descriptor ("" means
	// DefaultRateLimitDomain); RateLimitXHeaders turns on the
	// X-RateLimit response headers.
	RateLimitDomain   string
	RateLimitXHeaders bool
	// DefaultGlobalRateLimitPolicy applies to every virtual host that
	// sets no global policy of its own; it must have been checked with
	// ValidateGlobalRateLimitPolicy.
	DefaultGlobalRateLimitPolicy *switchyardv1.GlobalRateLimitPolicy
	// MaxIncludeDepth bounds include chains; 0 means
	// DefaultMaxIncludeDepth.
	MaxIncludeDepth int
	// KeyPairs remembers which certificate and key pairs were checked, so
	// that a certificate shared by many roots is parsed once. Build makes
	// one for each call when it is nil; a caller that builds roots one at
	// a time (an incremental build) passes its own. It caches a pure check:
	// results are the same with or without it.
	KeyPairs *KeyPairCache
	// Mesh selects the mesh Services and applies TrafficSplits to them
	// (BuildMesh); without it those objects are not read.
	Mesh bool
	// FallbackCertificate is the kubernetes.io/tls Secret served to TLS
	// clients without SNI by the hosts that enable it (fallback.go); nil
	// makes enabling it an error.
	FallbackCertificate *types.NamespacedName
	// ExternalNameServices lets routes and tcpproxies forward to Services
	// of type ExternalName, resolved by DNS. Off by default: an
	// ExternalName can name any host, the control plane or a cloud
	// metadata endpoint included, so whoever may create a Service could
	// reach it through the proxy.
	ExternalNameServices bool
}

func (o Options) maxDepth() int {
	if o.MaxIncludeDepth <= 0 {
		return DefaultMaxIncludeDepth
	}
	return o.MaxIncludeDepth
}

// Result is a build's output: the graph and what was concluded about every
// object read.
type Result struct {
	DAG *DAG
	// Statuses has one entry per HTTPProxy, ExtensionService and
	// TLSCertificateDelegation served by this controller, and per
	// TrafficSplit and TrafficTarget with Options.Mesh, sorted by key.
	Statuses []*Status
}

// Build builds the DAG from a snapshot. It never fails: every problem
// becomes a status condition on the object at fault, and that object is
// left out while every other object keeps working.
func Build(snap *objects.Snapshot, opts Options) *Result {
	if opts.KeyPairs == nil {
		opts.KeyPairs = NewKeyPairCache()
	}
	exts := BuildExtensionServices(snap)
	roots := rootProxies(snap, opts)
	results := make([]*RootResult, 0, len(roots))
	for _, p := range roots {
		results = append(results, BuildRoot(snap, opts, p, exts))
	}
	res := Assemble(snap, opts, results, exts)
	if opts.Mesh {
		m := BuildMesh(snap)
		res.DAG.Mesh = m.Services
		// TrafficSplit keys sort after every kind Assemble reports.
		res.Statuses = append(res.Statuses, m.Statuses...)
	}
	return res
}

// rootProxies returns the proxies with a virtualhost served by this
// controller, sorted by namespace and name.
func rootProxies(snap *objects.Snapshot, opts Options) []*switchyardv1.HTTPProxy {
	var out []*switchyardv1.HTTPProxy
	for _, p := range snap.HTTPProxies {
		if IsRoot(p, opts) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessObject(out[i].Namespace, out[i].Name, out[j].Namespace, out[j].Name) })
	return out
}

// Served reports whether this controller serves a proxy (its ingress
// class matches): only served proxies get a status.
func Served(p *switchyardv1.HTTPProxy, opts Options) bool {
	return p.Spec.IngressClassName == opts.IngressClassName
}

// IsRoot reports whether a proxy is a served root, one that Build calls
// BuildRoot for.
func IsRoot(p *switchyardv1.HTTPProxy, opts Options) bool {
	return p.Spec.VirtualHost != nil && Served(p, opts)
}

func lessObject(ns1, n1, ns2, n2 string) bool {
	if ns1 != ns2 {
		return ns1 < ns2
	}
	return n1 < n2
}
