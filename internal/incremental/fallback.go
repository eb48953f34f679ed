package incremental

import (
	"fmt"
	"sort"

	envoy_config_route_v3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// fallbackRoutes is what the hosts that use the fallback certificate share
// (translator/fallback.go): the route configuration holding each one's
// virtual host, and the fallback filter chain at the end of the HTTPS
// listener while there is any. Like the listener's chains, each virtual
// host is encoded once, with its root, and the route configuration is
// put together from their encodings, exactly the bytes encoding it whole
// gives (TestIncrementalEqualsFullBuild compares them), so that a change
// to one such host costs a copy of the others, not their translation.
type fallbackRoutes struct {
	// prefix and suffix are the route configuration's encoding around
	// its virtual_hosts field, tag that field's tag.
	prefix, suffix, tag []byte
	// vhosts are the encoded virtual hosts by host name, order their
	// names sorted, secret the fallback certificate each host names.
	vhosts map[string][]byte
	order  []string
	secret map[string]string
	// dirty is set when a host came, went or changed in this update.
	dirty bool
}

func (f *fallbackRoutes) init() {
	f.vhosts, f.secret = map[string][]byte{}, map[string]string{}
	field := (&envoy_config_route_v3.RouteConfiguration{}).ProtoReflect().Descriptor().Fields().ByName("virtual_hosts").Number()
	f.tag = protowire.AppendTag(nil, field, protowire.BytesType)
	probe := translator.FallbackRouteConfig([]*envoy_config_route_v3.VirtualHost{{Name: "probe"}})
	b, err := xdsres.Marshal(probe)
	if err != nil {
		panic(fmt.Sprintf("incremental: encoding the fallback route configuration: %v", err))
	}
	var ok bool
	if f.prefix, f.suffix, ok = splitAround(b, field); !ok {
		panic("incremental: the fallback route configuration's encoding has no virtual host")
	}
}

// spliced is the encoding of a message whose one repeated message field
// holds n encoded parts: prefix, each part under the field's tag, suffix
// (see splitAround).
func spliced(prefix, suffix, tag []byte, n int, part func(i int) []byte) []byte {
	size := len(prefix) + len(suffix)
	for i := range n {
		p := part(i)
		size += len(tag) + protowire.SizeVarint(uint64(len(p))) + len(p)
	}
	b := make([]byte, 0, size)
	b = append(b, prefix...)
	for i := range n {
		p := part(i)
		b = append(b, tag...)
		b = protowire.AppendVarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return append(b, suffix...)
}

// splitAround returns a message's encoding before and after the one
// occurrence of a field, false when the field is not there (or the
// encoding does not parse).
func splitAround(b []byte, field protowire.Number) (prefix, suffix []byte, ok bool) {
	for rest := b; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return nil, nil, false
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return nil, nil, false
		}
		if num == field {
			start := len(b) - len(rest)
			return b[:start], b[start+n+m:], true
		}
		rest = rest[n+m:]
	}
	return nil, nil, false
}

// encodeFallbackVirtualHost encodes what a secure host adds to the
// fallback route configuration, nil when it adds nothing. It uses the
// encoder of route configurations (xdsres.Marshal sorts a virtual host's
// maps as it sorts theirs), so that the spliced configuration is
// byte-identical to one encoded whole.
func encodeFallbackVirtualHost(svh *dag.SecureVirtualHost) ([]byte, error) {
	vh := translator.FallbackVirtualHost(svh)
	if vh == nil {
		return nil, nil
	}
	return xdsres.Marshal(vh)
}

func (f *fallbackRoutes) put(fqdn string, enc []byte, secret string) {
	if f.vhosts[fqdn] == nil {
		i := sort.SearchStrings(f.order, fqdn)
		f.order = insertAt(f.order, i, fqdn)
	}
	f.vhosts[fqdn], f.secret[fqdn] = enc, secret
	f.dirty = true
}

func (f *fallbackRoutes) remove(fqdn string) {
	if f.vhosts[fqdn] == nil {
		return
	}
	delete(f.vhosts, fqdn)
	delete(f.secret, fqdn)
	i := sort.SearchStrings(f.order, fqdn)
	f.order = append(f.order[:i], f.order[i+1:]...)
	f.dirty = true
}

// publishFallback sets the fallback route configuration and the HTTPS
// listener's fallback chain when a host that uses them changed. It runs
// before the listener is put together (httpsListener.publish).
func (e *Engine) publishFallback() {
	f := &e.fallback
	if !f.dirty {
		return
	}
	f.dirty = false
	if len(f.order) == 0 {
		e.set(xdsres.GroupEnvoy, resource.RouteType, translator.FallbackRouteName, nil)
		e.https.setTail(nil)
		return
	}
	b := spliced(f.prefix, f.suffix, f.tag, len(f.order), func(i int) []byte { return f.vhosts[f.order[i]] })
	e.set(xdsres.GroupEnvoy, resource.RouteType, translator.FallbackRouteName, xdsres.NewCompactResource(translator.FallbackRouteName, resource.RouteType, b))
	chain, err := xdsres.Marshal(translator.FallbackFilterChain(f.secret[f.order[0]]))
	if err != nil && e.u.err == nil {
		e.u.err = err
	}
	e.https.setTail(chain)
}
