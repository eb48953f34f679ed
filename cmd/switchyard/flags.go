package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"

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
	f.BoolVar(&d.Mesh, "mesh", d.Mesh, "serve the mesh: Services annotated switchyard.dev/mesh=true (or in an annotated namespace), with their TrafficSplits and TrafficTargets, to gRPC and DNS clients by service.namespace and to node proxies (group mesh)")
	f.StringVar(&t.ListenAddress, "envoy-listen-address", t.ListenAddress, "address Envoy's listeners bind")
	f.Uint32Var(&t.HTTPPort, "envoy-http-port", t.HTTPPort, "port of Envoy's plain-HTTP listener")
	f.Uint32Var(&t.HTTPSPort, "envoy-https-port", t.HTTPSPort, "port of Envoy's HTTPS listener")
	f.StringSliceVar(&t.DrainZones, "drain-zone", t.DrainZones, "topology zone whose endpoints are marked DRAINING (repeatable)")

	// The fallback certificate is cluster-wide, as in Contour: one filter
	// chain serves every host that enables it (site/security.md).
	f.Var(&nsNameValue{p: &d.FallbackCertificate}, "fallback-certificate", "NAMESPACE/NAME of the kubernetes.io/tls Secret served to TLS clients without SNI by the hosts that set spec.virtualhost.tls.enableFallbackCertificate")
}

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
