// Package switchyard is a CoreDNS plugin that answers DNS queries from the
// clusters and endpoints a Switchyard control plane (or any xDS v3 server)
// serves to its "dns" consumer group.
//
// Each cluster is a DNS name below every zone of the plugin's server block:
// cluster "web.shop" in zone "lb.example.org." answers
// "web.shop.lb.example.org.". An A or AAAA query gets an endpoint picked with
// Envoy's load-balancing semantics — priorities with the overprovisioning
// factor, locality weights scaled by their healthy share, endpoint weights —
// so that DNS clients are steered exactly like Envoy and gRPC clients of the
// same control plane: toward standby services when the primary fails, away
// from DRAINING endpoints at once.
//
// The package lives under cmd/ next to the CoreDNS binary that compiles it,
// but is importable: other plugins embed it through [New] and [Config]
// without a caddy.Controller, and may parse the same Corefile syntax with
// [ParseString]. site/dns.md is the user guide.
//
// The pieces, each in its own file:
//
//   - config.go, setup.go: the Config, its Corefile syntax and validation.
//   - assignment.go, cluster.go: decoding and validating xDS resources.
//   - pick.go: Envoy's priority, locality and endpoint selection, precomputed
//     per address family so a pick allocates nothing.
//   - table.go: the immutable table queries read, swapped atomically.
//   - state.go: the ADS state machine (ACK, NACK, subscriptions), pure and
//     fuzzed; client.go runs it over a gRPC stream with reconnects.
//   - switchyard.go: the plugin type, New, Start, Stop, Ready and Pick.
//   - handler.go: the DNS answers; debug.go: the TXT records describing
//     what the plugin knows.
//   - metrics.go: coredns_switchyard_* metrics.
package switchyard
