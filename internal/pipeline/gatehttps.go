package pipeline

import (
	"bytes"
	"fmt"
	"strings"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/switchyard-dev/switchyard/internal/incremental"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdscheck"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// The HTTPS listener holds one filter chain per secure host, so
// withholding it whole for one host's sake would freeze every other
// host's TLS configuration, or, with no previous version, serve no HTTPS
// at all. When the build's version fails, the gate serves it with each
// failing chain (one that fails validation or refers to what is not
// served) replaced by the chain the host had, or left out when it had
// none; the hosts of those chains are the ones told why. The fallback
// certificate's chain, shared by the hosts that use it, is one more chain
// like theirs: when it fails (its certificate withheld, say) it alone is
// left out, and those hosts are still served by SNI.

// HostProblem is why one host's filter chain on the HTTPS listener was
// withheld. FQDN is the chain's server name, or the chain's name when it
// has none (translator.FallbackChainName); Route is the route
// configuration whose owners are told.
type HostProblem struct {
	FQDN, Route, Problem string
}

// chainKey identifies a filter chain across versions of the listener, and
// chainRoute is the route configuration whose owners answer for it.
func chainKey(fc *envoy_config_listener_v3.FilterChain) string {
	if names := fc.GetFilterChainMatch().GetServerNames(); len(names) > 0 {
		return strings.Join(names, ",")
	}
	return fc.GetName()
}

func chainRoute(fc *envoy_config_listener_v3.FilterChain) string {
	if len(fc.GetFilterChainMatch().GetServerNames()) == 0 && fc.GetName() == translator.FallbackChainName {
		return translator.FallbackRouteName
	}
	return translator.HTTPSRouteName(chainKey(fc))
}

var httpsListener = typeName{resource.ListenerType, translator.HTTPSListenerName}

// patchHTTPS serves the envoy group's HTTPS listener as the build made it
// but with its failing chains replaced, when some chain fails. It
// reports whether it could (false when what fails is not in a chain, and
// the listener is withheld whole), and whether what is served changed.
func (gt *Gate) patchHTTPS(g xdsres.Group, target incremental.Targets, prev map[typeName]*xdsres.Resource, served incremental.Targets) (ok, changed bool) {
	cand := target[httpsListener.typ].Get(httpsListener.name)
	if g != xdsres.GroupEnvoy || cand == nil {
		return false, false
	}
	tgt, ok := cand.Decoded().(*envoy_config_listener_v3.Listener)
	if !ok {
		return false, false
	}
	var before map[string]*envoy_config_listener_v3.FilterChain
	if p := prev[httpsListener]; p != nil {
		if l, ok := p.Decoded().(*envoy_config_listener_v3.Listener); ok {
			before = chainsByHost(l)
		}
	}
	out := proto.Clone(tgt).(*envoy_config_listener_v3.Listener)
	out.FilterChains = nil
	var problems []HostProblem
	for _, fc := range tgt.GetFilterChains() {
		err := chainProblem(fc, served)
		if err == nil {
			out.FilterChains = append(out.FilterChains, fc)
			continue
		}
		host := chainKey(fc)
		problems = append(problems, HostProblem{FQDN: host, Route: chainRoute(fc), Problem: err.Error()})
		if old := before[host]; old != nil && chainProblem(old, served) == nil {
			out.FilterChains = append(out.FilterChains, old)
		}
	}
	if len(problems) == 0 {
		return false, false // what fails is not in a chain
	}
	r, err := xdsres.Encode(out)
	if err != nil || Check(r) != nil {
		return false, false
	}
	cur := served[httpsListener.typ].Get(httpsListener.name)
	for _, same := range []*xdsres.Resource{cur, prev[httpsListener]} {
		if same != nil && bytes.Equal(same.Any.GetValue(), r.Any.GetValue()) {
			r = same // the same content: clients have it
			break
		}
	}
	changed = r != cur
	served[httpsListener.typ].Put(httpsListener.name, r)
	// What failed stays recorded as it was (a version that failed
	// validation is not checked again; one withheld for its references
	// is, and passes once they are served), with the hosts to tell.
	ref := incremental.ResourceRef{Group: g, Type: httpsListener.typ, Name: httpsListener.name}
	rj := gt.rejected[g][ref]
	rj.err, rj.hosts = fmt.Errorf("%d filter chains withheld", len(problems)), problems
	gt.rejected[g][ref] = rj
	return true, changed
}

func chainsByHost(l *envoy_config_listener_v3.Listener) map[string]*envoy_config_listener_v3.FilterChain {
	out := map[string]*envoy_config_listener_v3.FilterChain{}
	for _, fc := range l.GetFilterChains() {
		out[chainKey(fc)] = fc
	}
	return out
}

// chainProblem is why one filter chain cannot be served: it fails
// validation or refers to a resource that is not served.
func chainProblem(fc *envoy_config_listener_v3.FilterChain, served incremental.Targets) error {
	errs, refs := xdscheck.Inspect(fc)
	if err := joinProblems(errs); err != nil {
		return err
	}
	for _, ref := range refs {
		if byName := served[ref.Type]; byName != nil && byName.Get(ref.Name) == nil {
			return fmt.Errorf("refers to %s %q, which is withheld", kindName(ref.Type), ref.Name)
		}
	}
	return nil
}
