package dag

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// RootResult is what one root proxy and the proxies it includes contribute
// to the DAG. It depends only on the objects listed in Deps, which is what
// lets an incremental build reuse it until one of them changes.
type RootResult struct {
	Root types.NamespacedName
	// FQDN is the host name claimed, "" when the virtualhost is invalid.
	FQDN string
	// Created and Root order competing claims on one FQDN: the oldest wins.
	Created metav1.Time
	// Insecure and Secure are nil when not served.
	Insecure *VirtualHost
	Secure   *SecureVirtualHost
	Clusters []*Cluster
	Secrets  []*Secret
	// DNSNames are the DNS names of the proxies in this tree.
	DNSNames []DNSName
	// Statuses of the root and of every proxy it reached.
	Statuses statusSet
	Deps     []objects.Key
}

// rootBuilder builds one RootResult.
type rootBuilder struct {
	snap     *objects.Snapshot
	opts     Options
	exts     Extensions
	deps     *depSet
	secrets  secretResolver
	statuses statusSet
	clusters map[string]*Cluster
	secretsM map[string]*Secret
	// seen maps a route match signature to the route that claimed it, so a
	// duplicate is reported against the proxy that introduced it.
	seen map[string]*Route
	dns  []DNSName

	// The virtual host's authorization, read by every route built after
	// secureHost: whether it is on, the default policy, and whether it
	// failed (so routes must refuse traffic instead of forwarding it).
	authEnabled         bool
	authDisabledDefault bool
	authContext         map[string]string
	authFailed          bool

	hostPolicy hostPolicy
}

// BuildRoot builds the part of the DAG that one root proxy owns.
func BuildRoot(snap *objects.Snapshot, opts Options, root *switchyardv1.HTTPProxy, exts Extensions) *RootResult {
	deps := newDepSet()
	rb := &rootBuilder{
		snap: snap, opts: opts, exts: exts, deps: deps,
		secrets:  secretResolver{snap: snap, deps: deps, keyPairs: opts.KeyPairs},
		statuses: statusSet{},
		clusters: map[string]*Cluster{},
		secretsM: map[string]*Secret{},
		seen:     map[string]*Route{},
	}
	nn := types.NamespacedName{Namespace: root.Namespace, Name: root.Name}
	res := &RootResult{Root: nn, Created: root.CreationTimestamp}
	rb.build(root, res)
	res.Statuses = rb.statuses
	res.Deps = deps.sorted()
	res.Clusters = sortedClusters(rb.clusters)
	res.Secrets = sortedSecrets(rb.secretsM)
	res.DNSNames = rb.dns
	return res
}

func (rb *rootBuilder) statusOf(p *switchyardv1.HTTPProxy) *Status {
	return rb.statuses.of(objects.Key{Kind: objects.KindHTTPProxy, Namespace: p.Namespace, Name: p.Name}, p.Generation)
}

func (rb *rootBuilder) cluster(spec ClusterSpec) *Cluster {
	c := NewCluster(spec)
	if existing, ok := rb.clusters[c.Name]; ok {
		return existing
	}
	rb.clusters[c.Name] = c
	return c
}

func (rb *rootBuilder) addSecret(s *Secret) {
	rb.secretsM[s.Name] = s
}

func (rb *rootBuilder) build(root *switchyardv1.HTTPProxy, res *RootResult) {
	nn := types.NamespacedName{Namespace: root.Namespace, Name: root.Name}
	rb.deps.add(objects.NewKey(objects.KindHTTPProxy, nn))
	st := rb.statusOf(root)
	vh := root.Spec.VirtualHost
	if len(rb.opts.RootNamespaces) > 0 && !slices.Contains(rb.opts.RootNamespaces, root.Namespace) {
		st.addError(ErrVirtualHost, "RootNamespaceNotAllowed", "spec.virtualhost: root HTTPProxies may only be created in the namespaces %s", strings.Join(rb.opts.RootNamespaces, ", "))
		return
	}
	if err := validateVirtualHostFQDN(vh.Fqdn); err != nil {
		st.addError(ErrVirtualHost, "InvalidFQDN", "spec.virtualhost.fqdn: %v", err)
		return
	}
	if len(root.Spec.Routes) == 0 && len(root.Spec.Includes) == 0 && root.Spec.TCPProxy == nil {
		// As in Contour. The host is not claimed either, so an empty root
		// cannot hold a name another root serves.
		st.addError(ErrSpec, "NothingDefined", "spec: a root HTTPProxy must have at least one of routes, includes and tcpproxy")
		return
	}
	res.FQDN = vh.Fqdn
	secure, permitInsecureAllowed := rb.secureHost(root, st)
	tlsOK := vh.TLS == nil || secure != nil
	authOK := authorizationFits(root, st)
	policyOK := rb.hostPolicies(root, st)
	routes, permit := rb.visitRoot(root)
	tcp := rb.tcpProxy(root, st)
	if !tlsOK || !authOK || !policyOK {
		// Serving the host without its TLS would downgrade it to clear
		// text, and without its authorization would skip the check. The
		// tree was still visited, for the statuses of the proxies it
		// includes, but nothing it built is served.
		clear(rb.clusters)
		clear(rb.secretsM)
		return
	}
	rb.proxyDNS(root, routes, tcp)
	rb.assembleHosts(res, vh.Fqdn, nn, secure, tcp, routes, permit, permitInsecureAllowed && rb.permitInsecureAllowed())
	rb.applyHostPolicies(res)
}

// authorizationFits reports an error when a root names an authorization
// server for a host that cannot run ext_authz: one without TLS (the CRD
// rejects it, a directory source does not) or one that forwards TCP.
// Serving such a host would forward every request unchecked, so the caller
// serves nothing of it instead. The global authorization server is not
// named by the root and does not apply to these hosts.
func authorizationFits(root *switchyardv1.HTTPProxy, st *Status) bool {
	vh := root.Spec.VirtualHost
	if vh.Authorization == nil || vh.Authorization.ExtensionServiceRef == nil {
		return true
	}
	const field = "spec.virtualhost.authorization"
	switch {
	case vh.TLS == nil:
		st.addError(ErrAuth, "AuthorizationWithoutTLS", "%s: requires spec.virtualhost.tls: ext_authz runs on HTTPS virtual hosts only, and over plain HTTP requests would reach the routes unchecked", field)
	case vh.TLS.Passthrough:
		st.addError(ErrAuth, "AuthorizationWithTCPProxy", "%s: cannot be used with spec.virtualhost.tls.passthrough: Envoy never sees the requests to check them", field)
	case root.Spec.TCPProxy != nil:
		st.addError(ErrAuth, "AuthorizationWithTCPProxy", "%s: cannot be used with spec.tcpproxy: ext_authz checks HTTP requests and this host forwards TCP", field)
	default:
		return true
	}
	return false
}

// assembleHosts builds the plain-HTTP and HTTPS virtual hosts of a root.
func (rb *rootBuilder) assembleHosts(res *RootResult, fqdn string, root types.NamespacedName, secure *SecureVirtualHost, tcp *TCPProxy, routes []*Route, permitInsecure map[*Route]bool, permitInsecureAllowed bool) {
	if secure == nil {
		if len(routes) > 0 {
			res.Insecure = &VirtualHost{FQDN: fqdn, Proxy: root, Routes: routes}
		}
		return
	}
	secure.VirtualHost = VirtualHost{FQDN: fqdn, Proxy: root}
	if tcp != nil {
		secure.TCPProxy = tcp
	} else {
		secure.Routes = routes
	}
	if secure.TCPProxy != nil || len(secure.Routes) > 0 {
		res.Secure = secure
	}
	if secure.Passthrough && tcp == nil {
		return
	}
	var plain []*Route
	for _, r := range routes {
		if permitInsecure[r] && permitInsecureAllowed {
			plain = append(plain, r)
			continue
		}
		redirect := r.matchOnly()
		redirect.HTTPSRedirect = true
		plain = append(plain, redirect)
	}
	if len(plain) > 0 {
		res.Insecure = &VirtualHost{FQDN: fqdn, Proxy: root, Routes: plain}
	}
}

// visitRoot converts the routes of the root and, through includes, of
// every proxy it reaches. It also returns which routes asked to be served
// over plain HTTP.
func (rb *rootBuilder) visitRoot(root *switchyardv1.HTTPProxy) ([]*Route, map[*Route]bool) {
	var routes []*Route
	permit := map[*Route]bool{}
	chain := []types.NamespacedName{{Namespace: root.Namespace, Name: root.Name}}
	rb.visit(root, matchState{}, chain, func(r *Route, permitInsecure bool) {
		routes = append(routes, r)
		if permitInsecure {
			permit[r] = true
		}
	})
	sortRoutes(routes)
	if domain, ok := strings.CutPrefix(root.Spec.VirtualHost.Fqdn, "*."); ok {
		for _, r := range routes {
			r.HeaderMatches = append(slices.Clip(r.HeaderMatches), wildcardAuthority(domain))
		}
	}
	return routes, permit
}

// visit converts a proxy's routes, then follows its includes depth first.
func (rb *rootBuilder) visit(p *switchyardv1.HTTPProxy, inh matchState, chain []types.NamespacedName, emit func(*Route, bool)) {
	st := rb.statusOf(p)
	nn := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	names := map[string]int{}
	for i := range p.Spec.Routes {
		r := &p.Spec.Routes[i]
		field := "spec.routes[" + strconv.Itoa(i) + "]"
		nameErr := false
		if r.Name != "" {
			if err := validateRouteName(r.Name); err != nil {
				st.addError(ErrRoute, "InvalidRouteName", "%s.name: %v", field, err)
				nameErr = true
			}
			if prev, dup := names[r.Name]; dup {
				st.addError(ErrRoute, "DuplicateRouteName", "%s.name: %q is already the name of spec.routes[%d]", field, r.Name, prev)
			} else {
				names[r.Name] = i
			}
		}
		b := &routeBuilder{rb: rb, proxy: nn, index: i, field: field, st: st}
		rt := b.build(r, inh)
		if rt == nil || !rb.claimMatch(rt, st, field) {
			continue
		}
		if nameErr {
			rt = b.invalid(rt, true)
			rt.Name = ""
		}
		emit(rt, r.PermitInsecure)
	}
	for i := range p.Spec.Includes {
		rb.include(p, i, inh, chain, emit)
	}
}

// claimMatch rejects a route whose conditions another route of the same
// virtual host already uses; the first one found (root first, then includes
// in order) keeps them.
func (rb *rootBuilder) claimMatch(rt *Route, st *Status, field string) bool {
	sig := matchSignature(rt)
	if prev, dup := rb.seen[sig]; dup {
		st.addError(ErrRoute, "DuplicateConditions", "%s.conditions: match the same requests as spec.routes[%d] of HTTPProxy %s", field, prev.Index, prev.Proxy)
		return false
	}
	rb.seen[sig] = rt
	return true
}

func (rb *rootBuilder) include(p *switchyardv1.HTTPProxy, i int, inh matchState, chain []types.NamespacedName, emit func(*Route, bool)) {
	st := rb.statusOf(p)
	inc := p.Spec.Includes[i]
	field := "spec.includes[" + strconv.Itoa(i) + "]"
	ns := inc.Namespace
	if ns == "" {
		ns = p.Namespace
	}
	target := types.NamespacedName{Namespace: ns, Name: inc.Name}
	conds, err := parseConditions(inc.Conditions, field+".conditions", true)
	if err != nil {
		st.addError(ErrInclude, "InvalidCondition", "%v", err)
		return
	}
	child := rb.lookupProxy(target)
	switch {
	case child == nil:
		st.addError(ErrInclude, "IncludeNotFound", "%s: HTTPProxy %s not found", field, target)
		return
	case child.Spec.VirtualHost != nil:
		st.addError(ErrInclude, "RootIncluded", "%s: HTTPProxy %s has a virtualhost and cannot be included", field, target)
		return
	case slices.Contains(chain, target):
		st.addError(ErrInclude, "IncludeCycle", "%s: including HTTPProxy %s creates a cycle: %s", field, target, cycleString(chain, target))
		return
	case len(chain) > rb.opts.maxDepth():
		st.addError(ErrInclude, "IncludeTooDeep", "%s: the include chain %s is deeper than the limit of %d", field, cycleString(chain, target), rb.opts.maxDepth())
		return
	}
	rb.visit(child, inh.narrow(conds), append(slices.Clone(chain), target), emit)
}

// lookupProxy finds a proxy served by this controller, recording the read.
func (rb *rootBuilder) lookupProxy(nn types.NamespacedName) *switchyardv1.HTTPProxy {
	rb.deps.add(objects.NewKey(objects.KindHTTPProxy, nn))
	p := rb.snap.HTTPProxies[nn]
	if p == nil || !Served(p, rb.opts) {
		return nil
	}
	return p
}

func cycleString(chain []types.NamespacedName, next types.NamespacedName) string {
	parts := make([]string, 0, len(chain)+1)
	for _, c := range chain {
		parts = append(parts, c.String())
	}
	return strings.Join(append(parts, next.String()), " -> ")
}

// secureHost validates virtualhost.tls. It returns nil when the host has no
// TLS (or the TLS is invalid, which the caller detects from the status),
// and whether permitInsecure may be honoured.
func (rb *rootBuilder) secureHost(root *switchyardv1.HTTPProxy, st *Status) (*SecureVirtualHost, bool) {
	t := root.Spec.VirtualHost.TLS
	if t == nil {
		return nil, true
	}
	svh := &SecureVirtualHost{Passthrough: t.Passthrough}
	var err error
	if svh.MinTLSVersion, svh.MaxTLSVersion, err = tlsVersions(t); err != nil {
		st.addError(ErrTLS, "InvalidTLSVersion", "spec.virtualhost.tls: %v", err)
		return nil, false
	}
	switch {
	case t.Passthrough && t.SecretName != "":
		st.addError(ErrTLS, "InvalidTLS", "spec.virtualhost.tls: secretName and passthrough are mutually exclusive")
		return nil, false
	case t.Passthrough && t.ClientValidation != nil:
		st.addError(ErrTLS, "InvalidTLS", "spec.virtualhost.tls.clientValidation: cannot be used with passthrough")
		return nil, false
	case t.Passthrough && t.EnableFallbackCertificate:
		st.addError(ErrTLS, "FallbackWithPassthrough", "spec.virtualhost.tls.enableFallbackCertificate: cannot be used with passthrough: without SNI there is no name to pick the backend by")
		return nil, false
	case t.Passthrough:
		if root.Spec.TCPProxy == nil {
			st.addError(ErrTLS, "PassthroughWithoutTCPProxy", "spec.virtualhost.tls.passthrough: requires spec.tcpproxy")
			return nil, false
		}
		return svh, true
	case t.SecretName == "":
		st.addError(ErrTLS, "InvalidTLS", "spec.virtualhost.tls: one of secretName and passthrough must be set")
		return nil, false
	}
	if svh.Secret, err = rb.secrets.tlsSecret(t.SecretName, root.Namespace); err != nil {
		st.addError(ErrTLS, reasonOf(err), "spec.virtualhost.tls.secretName: %v", err)
		return nil, false
	}
	rb.addSecret(svh.Secret)
	if !rb.clientValidation(t.ClientValidation, root.Namespace, svh, st) {
		return nil, false
	}
	permitInsecure := rb.authorize(root, svh, st)
	if !rb.fallbackCertificate(root, svh, st) {
		return nil, false
	}
	return svh, permitInsecure
}

func tlsVersions(t *switchyardv1.TLS) (string, string, error) {
	minV, maxV := "1.2", "1.3"
	for _, v := range []struct {
		field string
		in    string
		out   *string
	}{{"minimumProtocolVersion", t.MinimumProtocolVersion, &minV}, {"maximumProtocolVersion", t.MaximumProtocolVersion, &maxV}} {
		switch v.in {
		case "":
		case "1.2", "1.3":
			*v.out = v.in
		default:
			return "", "", fmt.Errorf("%s: %q is not 1.2 or 1.3", v.field, v.in)
		}
	}
	if minV > maxV {
		return "", "", fmt.Errorf("minimumProtocolVersion %s is above maximumProtocolVersion %s", minV, maxV)
	}
	return minV, maxV, nil
}
