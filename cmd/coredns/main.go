// Command coredns is CoreDNS v1.15 with the plugins most Corefiles use and
// Switchyard's DNS balancer (package switchyard in this directory). It
// takes CoreDNS's flags (-conf Corefile, -dns.port, -plugins, -version).
// site/dns.md tells how to run it next to `switchyard serve`.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/whoami"

	_ "github.com/switchyard-dev/switchyard/cmd/coredns/switchyard"
)

// directives is the plugin chain order; a plugin sees every query before
// the ones after it. It is CoreDNS's own order (core/dnsserver/zdirectives.go)
// restricted to the plugins compiled in, with switchyard placed just before
// cache. In front of cache on purpose: cache would keep one pick per name
// for the TTL and hand it to every client, so the split would happen once
// per TTL instead of once per query and a drained endpoint would be
// answered until the entry expired. Behind switchyard, cache still serves
// what falls through (fallthrough) and what forward answers.
//
// bind is there to listen on chosen addresses only (the tests use
// loopback). metadata, debug and dnstap come with forward; they are listed
// so that a Corefile may use them.
var directives = []string{
	"metadata",
	"bind",
	"debug",
	"ready",
	"health",
	"prometheus",
	"errors",
	"log",
	"dnstap",
	"switchyard",
	"cache",
	"forward",
	"whoami",
}

func init() { dnsserver.Directives = directives }

func main() { coremain.Run() }
