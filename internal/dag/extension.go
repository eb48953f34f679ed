package dag

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// defaultAuthTimeout bounds an authorization check when neither the
// virtual host nor the ExtensionService says otherwise.
const defaultAuthTimeout = 2 * time.Second

// ExtensionResult is a processed ExtensionService.
type ExtensionResult struct {
	Name types.NamespacedName
	// Cluster is nil when the ExtensionService is invalid.
	Cluster         *Cluster
	ResponseTimeout *time.Duration
	// AllowedNamespaces may reference it besides its own namespace.
	AllowedNamespaces []string
	Secrets           []*Secret
	Status            *Status
	Deps              []objects.Key
}

// Extensions are the processed ExtensionServices by name.
type Extensions map[types.NamespacedName]*ExtensionResult

// BuildExtensionServices processes every ExtensionService; each depends
// only on its own Services and Secrets.
func BuildExtensionServices(snap *objects.Snapshot) Extensions {
	out := Extensions{}
	for nn, ext := range snap.ExtensionServices {
		out[nn] = BuildExtension(snap, ext)
	}
	return out
}

// BuildExtension turns one ExtensionService into a cluster whose weighted
// localities split the calls between its targets (site/architecture.md, decision 2).
func BuildExtension(snap *objects.Snapshot, ext *switchyardv1alpha1.ExtensionService) *ExtensionResult {
	nn := types.NamespacedName{Namespace: ext.Namespace, Name: ext.Name}
	deps := newDepSet()
	deps.add(objects.NewKey(objects.KindExtensionService, nn))
	rb := &rootBuilder{
		snap: snap, deps: deps,
		secrets:  secretResolver{snap: snap, deps: deps},
		statuses: statusSet{},
		clusters: map[string]*Cluster{},
		secretsM: map[string]*Secret{},
	}
	st := rb.statuses.of(objects.NewKey(objects.KindExtensionService, nn), ext.Generation)
	res := &ExtensionResult{Name: nn, Status: st, AllowedNamespaces: ext.Spec.AllowedNamespaces}
	spec, ok := extensionSpec(rb, ext, st, res)
	if ok {
		res.Cluster = NewCluster(spec)
		res.Secrets = sortedSecrets(rb.secretsM)
	}
	res.Deps = deps.sorted()
	st.finalize("ExtensionService")
	return res
}

func extensionSpec(rb *rootBuilder, ext *switchyardv1alpha1.ExtensionService, st *Status, res *ExtensionResult) (ClusterSpec, bool) {
	var spec ClusterSpec
	common, ok := extensionCommon(ext, st, res)
	protocol := "h2"
	if p := ext.Spec.Protocol; p != nil {
		switch *p {
		case "h2", "tls":
		case "h2c":
			protocol = "h2c"
		default:
			st.addError(ErrService, "InvalidProtocol", "spec.protocol: %q is not one of h2, h2c, tls", *p)
			ok = false
		}
	}
	if len(ext.Spec.Services) == 0 {
		st.addError(ErrService, "NoServices", "spec.services: at least one service is required")
		return spec, false
	}
	services := make([]switchyardv1.Service, 0, len(ext.Spec.Services))
	for _, t := range ext.Spec.Services {
		services = append(services, switchyardv1.Service{
			Name: t.Name, Port: t.Port, Weight: t.Weight, Priority: t.Priority,
			Protocol: &protocol, UpstreamValidation: ext.Spec.UpstreamValidation,
		})
	}
	fb := &forwardBuilder{rb: rb, ns: ext.Namespace, field: "spec", st: st, common: common, validationField: "spec.validation", extension: true}
	fwd, fwdOK := fb.build(services)
	if !ok || !fwdOK || fwd == nil || fwd.Cluster == nil {
		return spec, false
	}
	spec = fwd.Cluster.Spec
	spec.CircuitBreakers = circuitBreakers(ext.Spec.CircuitBreakerPolicy)
	return spec, len(st.Errors) == 0
}

func extensionCommon(ext *switchyardv1alpha1.ExtensionService, st *Status, res *ExtensionResult) (clusterCommon, bool) {
	var c clusterCommon
	ok := true
	lb, err := loadBalancer(ext.Spec.LoadBalancerPolicy)
	switch {
	case err != nil:
		st.addError(ErrService, "InvalidLoadBalancerPolicy", "spec.loadBalancerPolicy: %v", err)
		ok = false
	case lb == LBCookie || lb == LBRequestHash:
		st.addError(ErrService, "InvalidLoadBalancerPolicy", "spec.loadBalancerPolicy.strategy: %s needs HTTP requests to hash and is not supported for an ExtensionService", lb)
		ok = false
	}
	c.LoadBalancer = lb
	if tp := ext.Spec.TimeoutPolicy; tp != nil {
		if res.ResponseTimeout, err = parseDuration(tp.Response); err != nil {
			st.addError(ErrService, "InvalidTimeout", "spec.timeoutPolicy.response: %v", err)
			ok = false
		} else if res.ResponseTimeout != nil && *res.ResponseTimeout == 0 {
			// Envoy would wait forever for an authorization answer, holding
			// every request of the hosts that use this service.
			st.addError(ErrService, "InvalidTimeout", "spec.timeoutPolicy.response: must be a finite duration, not infinity")
			ok = false
		}
		if c.IdleTimeout, err = parseDuration(tp.Idle); err != nil {
			st.addError(ErrService, "InvalidTimeout", "spec.timeoutPolicy.idle: %v", err)
			ok = false
		}
	}
	for i, ns := range ext.Spec.AllowedNamespaces {
		if ns == "" {
			st.addError(ErrSpec, "InvalidNamespace", "spec.allowedNamespaces[%d]: must not be empty", i)
			ok = false
		}
	}
	return c, ok
}

func circuitBreakers(cb *switchyardv1alpha1.CircuitBreakers) *CircuitBreakers {
	if cb == nil {
		return nil
	}
	clamp := func(p *int64) uint32 {
		if p == nil {
			return 0
		}
		v, err := toUint32(*p)
		if err != nil {
			return 0
		}
		return v
	}
	out := &CircuitBreakers{
		MaxConnections:     clamp(cb.MaxConnections),
		MaxPendingRequests: clamp(cb.MaxPendingRequests),
		MaxRequests:        clamp(cb.MaxRequests),
		MaxRetries:         clamp(cb.MaxRetries),
		MaxRetriesSet:      cb.MaxRetries != nil,
	}
	return out
}

// authorize configures ext_authz on a secure virtual host. It returns
// whether routes may still be served over plain HTTP (they may not once
// the host has authorization: plain HTTP would bypass it).
func (rb *rootBuilder) authorize(root *switchyardv1.HTTPProxy, svh *SecureVirtualHost, st *Status) bool {
	az := root.Spec.VirtualHost.Authorization
	ref, explicit := rb.authRef(root, az)
	if ref == nil {
		return true
	}
	rb.authEnabled = true
	if az != nil && az.AuthPolicy != nil {
		rb.authDisabledDefault = az.AuthPolicy.Disabled
		rb.authContext = az.AuthPolicy.Context
		if err := validateContext(az.AuthPolicy.Context); err != nil {
			st.addError(ErrAuth, "InvalidAuthPolicy", "spec.virtualhost.authorization.authPolicy.context: %v; requests to this host are refused until it is fixed", err)
			rb.authContext = nil
			rb.authFailed = true
			return false
		}
	}
	auth, err := rb.resolveAuth(root, az, *ref, explicit)
	if err != "" {
		st.addError(ErrAuth, "AuthorizationUnavailable", "%s; requests to this host are refused until it is fixed", err)
		rb.authFailed = true
		return false
	}
	svh.Authorization = auth
	rb.clusters[auth.Cluster.Name] = auth.Cluster
	return false
}

// authRef returns the ExtensionService a host's authorization uses, and
// whether the proxy named it itself (as opposed to the global one).
func (rb *rootBuilder) authRef(root *switchyardv1.HTTPProxy, az *switchyardv1.AuthorizationServer) (*types.NamespacedName, bool) {
	if az != nil && az.ExtensionServiceRef != nil {
		ns := az.ExtensionServiceRef.Namespace
		if ns == "" {
			ns = root.Namespace
		}
		return &types.NamespacedName{Namespace: ns, Name: az.ExtensionServiceRef.Name}, true
	}
	optedOut := az != nil && az.AuthPolicy != nil && az.AuthPolicy.Disabled
	// The global server checks HTTP requests: a host that forwards TCP has
	// none, and must not be reported as refusing them.
	if rb.opts.GlobalAuthorization != nil && !optedOut && root.Spec.TCPProxy == nil {
		return rb.opts.GlobalAuthorization, false
	}
	return nil, false
}

// resolveAuth builds the Authorization, or says why it cannot.
func (rb *rootBuilder) resolveAuth(root *switchyardv1.HTTPProxy, az *switchyardv1.AuthorizationServer, ref types.NamespacedName, explicit bool) (*Authorization, string) {
	field := "spec.virtualhost.authorization.extensionRef"
	if !explicit {
		field = "global authorization (--global-authorization)"
	}
	if explicit {
		if v := az.ExtensionServiceRef.APIVersion; v != "" && v != switchyardv1alpha1.SchemeGroupVersion.String() {
			return nil, fmt.Sprintf("%s.apiVersion: %q is not %s", field, v, switchyardv1alpha1.SchemeGroupVersion)
		}
	}
	rb.deps.add(objects.NewKey(objects.KindExtensionService, ref))
	ext := rb.exts[ref]
	if ext == nil {
		return nil, fmt.Sprintf("%s: ExtensionService %s not found", field, ref)
	}
	if explicit && ref.Namespace != root.Namespace && !allowsNamespace(ext.AllowedNamespaces, root.Namespace) {
		return nil, fmt.Sprintf("%s: ExtensionService %s does not allow references from namespace %q (its spec.allowedNamespaces must list it)", field, ref, root.Namespace)
	}
	if ext.Cluster == nil {
		return nil, fmt.Sprintf("%s: ExtensionService %s is invalid: %s", field, ref, ext.Status.Description)
	}
	for _, s := range ext.Secrets {
		rb.addSecret(s)
	}
	auth := &Authorization{Cluster: ext.Cluster, ExtensionService: ref, ResponseTimeout: defaultAuthTimeout, Context: rb.authContext}
	if ext.ResponseTimeout != nil && *ext.ResponseTimeout > 0 {
		auth.ResponseTimeout = *ext.ResponseTimeout
	}
	if az == nil {
		return auth, ""
	}
	return rb.authSettings(az, auth)
}

func (rb *rootBuilder) authSettings(az *switchyardv1.AuthorizationServer, auth *Authorization) (*Authorization, string) {
	const field = "spec.virtualhost.authorization"
	if az.ResponseTimeout != "" {
		d, err := parseDuration(az.ResponseTimeout)
		switch {
		case err != nil:
			return nil, fmt.Sprintf("%s.responseTimeout: %v", field, err)
		case *d == 0:
			return nil, fmt.Sprintf("%s.responseTimeout: must be a finite duration", field)
		}
		auth.ResponseTimeout = *d
	}
	auth.FailOpen = az.FailOpen
	if wb := az.WithRequestBody; wb != nil {
		body := &AuthorizationBody{MaxRequestBytes: 1024, AllowPartialMessage: wb.AllowPartialMessage, PackAsBytes: wb.PackAsBytes}
		if wb.MaxRequestBytes != nil {
			if *wb.MaxRequestBytes < 1 {
				return nil, fmt.Sprintf("%s.withRequestBody.maxRequestBytes: must be at least 1", field)
			}
			body.MaxRequestBytes = uint32(*wb.MaxRequestBytes)
		}
		auth.WithRequestBody = body
	}
	return auth, ""
}

// allowsNamespace reports whether an ExtensionService's allowedNamespaces
// admits ns, "*" admitting every namespace.
func allowsNamespace(allowed []string, ns string) bool {
	return slices.Contains(allowed, ns) || slices.Contains(allowed, "*")
}

// routeAuth applies the host's authorization to one route: whether it is
// checked, with what context, and — when the host's authorization could not
// be configured — refuses the route rather than forward unchecked traffic.
func (b *routeBuilder) routeAuth(r *switchyardv1.Route, out *Route) *Route {
	rb := b.rb
	if !rb.authEnabled {
		if r.AuthPolicy != nil {
			b.st.addWarning(ErrAuth, "AuthPolicyUnused", "%s.authPolicy: has no effect, the virtual host has no authorization", b.field)
		}
		return out
	}
	disabled := rb.authDisabledDefault
	var ctx map[string]string
	if r.AuthPolicy != nil {
		disabled = r.AuthPolicy.Disabled
		ctx = r.AuthPolicy.Context
		if err := validateContext(ctx); err != nil {
			b.st.addError(ErrRoute, "InvalidAuthPolicy", "%s.authPolicy.context: %v", b.field, err)
			return b.invalid(out, true)
		}
	}
	out.AuthDisabled = disabled
	if !disabled {
		out.AuthContext = mergeContext(rb.authContext, ctx)
	}
	if rb.authFailed && !disabled && out.Forward != nil {
		refused := out.matchOnly()
		refused.DirectResponse = &DirectResponse{StatusCode: invalidRouteStatus, Body: "authorization for this host is not available; see the status of its root HTTPProxy"}
		return refused
	}
	return out
}

func mergeContext(base, over map[string]string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

func sortedClusters(m map[string]*Cluster) []*Cluster {
	out := make([]*Cluster, 0, len(m))
	for _, c := range m {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *Cluster) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func sortedSecrets(m map[string]*Secret) []*Secret {
	out := make([]*Secret, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Secret) int { return strings.Compare(a.Name, b.Name) })
	return out
}
