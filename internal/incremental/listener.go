package incremental

import (
	"bytes"
	"fmt"
	"sort"

	envoy_config_listener_v3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// httpsListener keeps the HTTPS listener's filter chains, one per secure
// virtual host, each encoded once. The listener holds every chain, so
// encoding it whole after each change would cost as much as all the hosts
// together; instead its encoding is put together from the chains' own,
// between the bytes of the listener's other fields, which is exactly what
// encoding it whole gives (a test compares the two).
type httpsListener struct {
	opts translator.Options
	// prefix and suffix are the listener's encoding before and after its
	// filter_chains field.
	prefix, suffix []byte
	tag            []byte
	// chains are the encoded filter chains by host name.
	chains map[string][]byte
	// order is the host names of chains, sorted: the listener's order.
	order []string
	// before holds, for the hosts touched by the update in progress, their
	// chain's encoding before it (nil when it had none).
	before map[string][]byte
	// tail is the chain after the hosts' (the fallback certificate's, see
	// fallbackRoutes), nil when there is none; tailChanged is set when
	// the update in progress changed it.
	tail        []byte
	tailChanged bool
}

func (h *httpsListener) init(opts translator.Options) {
	h.opts = opts
	h.chains = map[string][]byte{}
	h.before = map[string][]byte{}
	field := (&envoy_config_listener_v3.Listener{}).ProtoReflect().Descriptor().Fields().ByName("filter_chains").Number()
	h.tag = protowire.AppendTag(nil, field, protowire.BytesType)
	probe := translator.HTTPSListenerWithChains([]*envoy_config_listener_v3.FilterChain{{Name: "probe"}}, opts)
	b, err := xdsres.Marshal(probe)
	if err != nil {
		panic(fmt.Sprintf("incremental: encoding the HTTPS listener: %v", err))
	}
	var ok bool
	if h.prefix, h.suffix, ok = splitAround(b, field); !ok {
		panic("incremental: the HTTPS listener's encoding has no filter chain")
	}
}

func (h *httpsListener) setTail(enc []byte) {
	if !bytes.Equal(h.tail, enc) || (h.tail == nil) != (enc == nil) {
		h.tail, h.tailChanged = enc, true
	}
}

func (h *httpsListener) touch(fqdn string) {
	if _, ok := h.before[fqdn]; ok {
		return
	}
	h.before[fqdn] = h.chains[fqdn]
}

func (h *httpsListener) put(fqdn string, enc []byte) {
	h.touch(fqdn)
	if h.chains[fqdn] == nil {
		i := sort.SearchStrings(h.order, fqdn)
		h.order = insertAt(h.order, i, fqdn)
	}
	h.chains[fqdn] = enc
}

func (h *httpsListener) remove(fqdn string) {
	h.touch(fqdn)
	if h.chains[fqdn] == nil {
		return
	}
	delete(h.chains, fqdn)
	i := sort.SearchStrings(h.order, fqdn)
	h.order = append(h.order[:i], h.order[i+1:]...)
}

// publish rebuilds the listener when a chain changed.
func (h *httpsListener) publish(e *Engine) {
	changed := h.tailChanged
	h.tailChanged = false
	for fqdn, old := range h.before {
		c := h.chains[fqdn]
		if (c == nil) != (old == nil) || (c != nil && !bytes.Equal(c, old)) {
			changed = true
			break
		}
	}
	h.before = map[string][]byte{} // not clear: see settleDNS
	if !changed {
		return
	}
	if len(h.order) == 0 {
		e.set(xdsres.GroupEnvoy, resource.ListenerType, translator.HTTPSListenerName, nil)
		return
	}
	n := len(h.order)
	if h.tail != nil {
		n++
	}
	b := spliced(h.prefix, h.suffix, h.tag, n, func(i int) []byte {
		if i == len(h.order) {
			return h.tail
		}
		return h.chains[h.order[i]]
	})
	if e.u.initial {
		h.share(e, b)
	}
	e.set(xdsres.GroupEnvoy, resource.ListenerType, translator.HTTPSListenerName, xdsres.NewCompactResource(translator.HTTPSListenerName, resource.ListenerType, b))
}

// share points the hosts' chains, and their roots' translations, at
// their copies in the first build's listener encoding b, so that the
// chains encoded one by one are not kept besides (about 5 MB at 10,000
// roots, half of them secure). Later updates leave the chains as they
// are: what they keep of b is never more than the chains were.
func (h *httpsListener) share(e *Engine, b []byte) {
	pos := len(h.prefix)
	for _, fqdn := range h.order {
		c := h.chains[fqdn]
		pos += len(h.tag) + protowire.SizeVarint(uint64(len(c)))
		in := b[pos : pos+len(c) : pos+len(c)]
		pos += len(c)
		h.chains[fqdn] = in
		if list := e.claims.fqdn[fqdn]; len(list) > 0 {
			if a := list[0].added; a != nil && a.winner && bytes.Equal(a.out.chain, in) {
				a.out.chain = in
			}
		}
	}
}
