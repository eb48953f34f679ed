package main

import (
	"github.com/spf13/pflag"

	"github.com/switchyard-dev/switchyard/internal/server"
)

// The gateways are listed, not derived from the ingress classes seen: a
// typo in one HTTPProxy must not create a load balancer's configuration
// that no Envoy asked for, and an Envoy must not be served a gateway that
// an operator never meant to run (site/gateways.md).
func init() {
	serveFlags = append(serveFlags, func(f *pflag.FlagSet, cfg *server.Config) {
		f.StringSliceVar(&cfg.Pipeline.Gateways, "gateways", nil, "further gateways to serve, each named for the spec.ingressClassName of its HTTPProxies; an Envoy joins one with bootstrap --gateway NAME, and one naming none gets the default gateway (--ingress-class-name)")
	})
}
