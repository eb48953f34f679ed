package main

import (
	"cmp"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/translator"
)

// addBuildFlags registers the flags that change what a build makes of the
// objects; render and serve share them so that render shows what serve
// would serve.
func addBuildFlags(f *pflag.FlagSet, d *dag.Options, t *translator.Options) {
	f.StringVar(&d.IngressClassName, "ingress-class-name", d.IngressClassName, "serve only HTTPProxies whose spec.ingressClassName is this (empty: those without one)")
	f.StringSliceVar(&d.RootNamespaces, "root-namespaces", d.RootNamespaces, "namespaces where root HTTPProxies (with a virtualhost) may live; empty allows all")
	f.Var(&nsNameValue{p: &d.GlobalAuthorization}, "global-authorization", "NAMESPACE/NAME of an ExtensionService that authorizes every secure virtual host that does not opt out")
	f.Var(&nsNameValue{p: &d.RateLimitService}, "rate-limit-service", "NAMESPACE/NAME of the ExtensionService, an envoy.service.ratelimit.v3 server, that global rate limits (rateLimitPolicy.global) ask")
	f.StringVar(&d.RateLimitDomain, "rate-limit-domain", cmp.Or(d.RateLimitDomain, dag.DefaultRateLimitDomain), "domain sent with every descriptor to the rate limit service")
	f.BoolVar(&d.RateLimitFailOpen, "rate-limit-fail-open", d.RateLimitFailOpen, "let requests through when the rate limit service fails or cannot be configured (global policies are then dropped with a warning) instead of refusing them")
	f.BoolVar(&d.RateLimitXHeaders, "rate-limit-x-headers", d.RateLimitXHeaders, "add the X-RateLimit-Limit, -Remaining and -Reset headers (draft 03) to responses of globally rate-limited routes")
	f.Var(&globalPolicyValue{p: &d.DefaultGlobalRateLimitPolicy}, "rate-limit-default-policy", "FILE holding a global rate limit policy (YAML or JSON, the fields of rateLimitPolicy.global) for every virtual host that sets none; a host opts out with rateLimitPolicy.global.disabled: true")
	f.BoolVar(&d.Mesh, "mesh", d.Mesh, "serve the mesh: Services annotated switchyard.dev/mesh=true (or in an annotated namespace), with their TrafficSplits and TrafficTargets, to gRPC and DNS clients by service.namespace and to node proxies (group mesh)")
	f.StringVar(&t.ListenAddress, "envoy-listen-address", t.ListenAddress, "address Envoy's listeners bind")
	f.Uint32Var(&t.HTTPPort, "envoy-http-port", t.HTTPPort, "port of Envoy's plain-HTTP listener")
	f.Uint32Var(&t.HTTPSPort, "envoy-https-port", t.HTTPSPort, "port of Envoy's HTTPS listener")
	f.StringSliceVar(&t.DrainZones, "drain-zone", t.DrainZones, "topology zone whose endpoints are marked DRAINING (repeatable)")

	// The fallback certificate is cluster-wide, as in Contour: one filter
	// chain serves every host that enables it (site/security.md).
	f.Var(&nsNameValue{p: &d.FallbackCertificate}, "fallback-certificate", "NAMESPACE/NAME of the kubernetes.io/tls Secret served to TLS clients without SNI by the hosts that set spec.virtualhost.tls.enableFallbackCertificate")
	addDNSFlags(f, d, t)
}

// addDNSFlags registers the flags of upstreams resolved by DNS:
// ExternalName Services and the JWKS hosts of JWT providers.
func addDNSFlags(f *pflag.FlagSet, d *dag.Options, t *translator.Options) {
	f.BoolVar(&d.ExternalNameServices, "enable-external-name-services", d.ExternalNameServices, "let routes and tcpproxies forward to Services of type ExternalName, resolved by DNS. Off by default: an ExternalName can name any host, the control plane and cloud metadata endpoints included, so whoever can create a Service could reach them through the proxy")
	f.Var(&dnsResolversValue{p: &t.DNSResolvers}, "dns-resolvers", "IP[:PORT],... of the name servers Envoy asks for the clusters it resolves by DNS (ExternalName Services, JWKS hosts); empty: Envoy's resolv.conf")
	f.Var(&dnsRefreshValue{p: &t.DNSRefreshRate}, "dns-refresh-rate", "how often Envoy resolves those clusters' names again, such as 30s; empty: Envoy's default (5s)")
}

// dnsResolversValue parses IP[:PORT],... into resolvers.
type dnsResolversValue struct{ p *[]translator.DNSResolver }

func (v *dnsResolversValue) String() string {
	out := make([]string, 0, len(*v.p))
	for _, r := range *v.p {
		out = append(out, netip.AddrPortFrom(r.Addr, uint16(r.Port)).String())
	}
	return strings.Join(out, ",")
}

func (v *dnsResolversValue) Set(s string) error {
	var out []translator.DNSResolver
	for _, e := range strings.Split(s, ",") {
		r, err := translator.ParseDNSResolver(strings.TrimSpace(e))
		if err != nil {
			return err
		}
		out = append(out, r)
	}
	*v.p = append(*v.p, out...)
	return nil
}

func (v *dnsResolversValue) Type() string { return "ip[:port],..." }

// dnsRefreshValue parses a duration Envoy accepts as a DNS refresh rate.
type dnsRefreshValue struct{ p *time.Duration }

func (v *dnsRefreshValue) String() string {
	if *v.p == 0 {
		return ""
	}
	return v.p.String()
}

func (v *dnsRefreshValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration: write one such as 30s or 1m", s)
	}
	if d <= 0 {
		// An explicit 0 is a mistake, not a way to ask for the default.
		return fmt.Errorf("%q is not a refresh rate: give a duration above 1ms, such as 30s (leave the flag out for Envoy's 5s)", s)
	}
	if err := translator.CheckDNSRefreshRate(d); err != nil {
		return err
	}
	*v.p = d
	return nil
}

func (v *dnsRefreshValue) Type() string { return "duration" }

// nsNameValue parses NAMESPACE/NAME into a *types.NamespacedName.
type nsNameValue struct{ p **types.NamespacedName }

func (v *nsNameValue) String() string {
	if *v.p == nil {
		return ""
	}
	return (*v.p).String()
}

func (v *nsNameValue) Set(s string) error {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("%q is not NAMESPACE/NAME", s)
	}
	*v.p = &types.NamespacedName{Namespace: ns, Name: name}
	return nil
}

func (v *nsNameValue) Type() string { return "namespace/name" }

// globalPolicyValue reads a GlobalRateLimitPolicy from a file and checks
// it as an HTTPProxy's would be: a wrong default policy is refused at
// start rather than taking every host down.
type globalPolicyValue struct {
	p    **switchyardv1.GlobalRateLimitPolicy
	file string
}

func (v *globalPolicyValue) String() string { return v.file }

func (v *globalPolicyValue) Set(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var p switchyardv1.GlobalRateLimitPolicy
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return fmt.Errorf("%s: %v; it must hold the fields of rateLimitPolicy.global, e.g. descriptors: [{entries: [{remoteAddress: {}}]}]", file, err)
	}
	if len(p.Descriptors) == 0 {
		return fmt.Errorf("%s: descriptors: must list at least one descriptor, e.g. descriptors: [{entries: [{remoteAddress: {}}]}]", file)
	}
	if err := dag.ValidateGlobalRateLimitPolicy(&p, ""); err != nil {
		return fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "."))
	}
	v.file, *v.p = file, &p
	return nil
}

func (v *globalPolicyValue) Type() string { return "file" }
