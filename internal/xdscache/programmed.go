package xdscache

import (
	"fmt"
	"sort"

	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

// Ref names one resource of a group.
type Ref struct {
	Group      xdsres.Group
	Type, Name string
}

// Served is a resource as the cache serves it: its version ("" while it
// is not in the cache yet) and the version of its whole type in its group.
type Served struct {
	Ref
	Version, TypeVersion string
	// Gateway is the gateway of the cache that serves it, and
	// DefaultGateway whether that is the default one, which also serves
	// the nodes that name none: a node of another gateway is unconcerned
	// by it, whatever it holds under the same name.
	Gateway        string
	DefaultGateway bool
}

// ResourceState is what one node did with one resource.
type ResourceState int

// The states of a resource on a node.
const (
	// Unconcerned: the node does not receive it (another group, a type or
	// a name it did not subscribe to).
	Unconcerned ResourceState = iota
	// Waiting: the node receives it but has not acknowledged the current
	// version.
	Waiting
	// Acked: the node acknowledged the current version.
	Acked
	// Rejected: the node NACKed the current version.
	Rejected
)

// NodeView is one connected node as ProgrammedOf sees it.
type NodeView interface {
	// ID is the node's id; Group its consumer group.
	ID() string
	Group() xdsres.Group
	// State says what the node did with r's current version, and for a
	// rejection the client's error_detail.
	State(r Served) (ResourceState, string)
}

// ProgrammedOf aggregates what every node did with an object's resources.
// It is a pure function of its arguments: a rejection anywhere wins (the
// first node by id names it), then anything not yet acknowledged, then
// True when some node acknowledged everything it receives. nodes should
// be sorted by id, so that the message is stable.
func ProgrammedOf(resources []Served, nodes []NodeView) xdsres.Programmed {
	var t Tally
	for _, n := range nodes {
		t.Add(resources, n)
	}
	return t.Programmed(resources)
}

// Tally is ProgrammedOf one node at a time: what the nodes added so far
// did with one object's resources. Evaluate adds each node to every
// object's tally in turn, so that it reads one node at a time.
type Tally struct {
	waiting, acked bool
	rejected       *xdsres.Programmed
}

// Add folds what node n did with the object's resources into the tally.
// Nodes must be added in the order of their ids.
func (t *Tally) Add(resources []Served, n NodeView) {
	if t.rejected != nil {
		return
	}
	for _, r := range resources {
		if r.Group != n.Group() {
			continue
		}
		switch st, detail := n.State(r); st {
		case Rejected:
			t.rejected = &xdsres.Programmed{Status: "False", Reason: xdsres.ReasonRejected,
				Message: fmt.Sprintf("node %q (%s) rejected %s %q: %s", n.ID(), n.Group(), xdsres.ShortType(r.Type), r.Name, detail)}
			return
		case Waiting:
			t.waiting = true
		case Acked:
			t.acked = true
		}
	}
}

// Programmed returns the condition the tally adds up to.
func (t *Tally) Programmed(resources []Served) xdsres.Programmed {
	switch {
	case len(resources) == 0:
		return xdsres.Programmed{Status: "Unknown", Reason: xdsres.ReasonNotServed, Message: "none of this object's configuration is served"}
	case t.rejected != nil:
		return *t.rejected
	case t.waiting:
		return xdsres.Programmed{Status: "Unknown", Reason: xdsres.ReasonPending, Message: "waiting for connected nodes to acknowledge the current configuration"}
	case t.acked:
		return xdsres.Programmed{Status: "True", Reason: xdsres.ReasonProgrammed, Message: "every connected node that receives this configuration acknowledged it"}
	}
	return xdsres.Programmed{Status: "Unknown", Reason: xdsres.ReasonNoNodes, Message: "no connected node receives this configuration"}
}

// Evaluate returns the Programmed condition of each object, given the
// resources of each as the cache serves them (Cache.Served), from what
// the open streams acknowledged and rejected. It holds one stream's lock
// at a time, so that streams answering meanwhile wait for one node's
// share of the work, not all of it.
func (a *Acks) Evaluate(objects [][]Served) []xdsres.Programmed {
	a.mu.Lock()
	nodes := make([]*streamAcks, 0, len(a.streams))
	for _, st := range a.streams {
		nodes = append(nodes, st)
	}
	a.mu.Unlock()
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID() < nodes[j].ID() })
	tallies := make([]Tally, len(objects))
	for _, n := range nodes {
		n.mu.Lock()
		for i, rs := range objects {
			tallies[i].Add(rs, n)
		}
		n.mu.Unlock()
	}
	out := make([]xdsres.Programmed, len(objects))
	for i, rs := range objects {
		out[i] = tallies[i].Programmed(rs)
	}
	return out
}

// ID implements NodeView.
func (st *streamAcks) ID() string { return st.node }

// Group implements NodeView.
func (st *streamAcks) Group() xdsres.Group { return st.group }

// State implements NodeView; the caller holds the stream's lock.
func (st *streamAcks) State(r Served) (ResourceState, string) {
	ta := st.types[r.Type]
	if ta == nil || !st.serves(r) {
		return Unconcerned, ""
	}
	if rej, ok := ta.rejected[r.Name]; ok && rej.Version == r.Version {
		return Rejected, rej.Detail
	}
	v, had := ta.acked[r.Name]
	if had && v == r.Version && r.Version != "" {
		return Acked, ""
	}
	if ta.currentAsOf != "" && ta.currentAsOf == r.TypeVersion && r.Version != "" {
		return Acked, ""
	}
	if ta.wildcard || had {
		return Waiting, ""
	}
	if ta.inflight != nil {
		if _, ok := ta.inflight.versions[r.Name]; ok {
			return Waiting, ""
		}
	}
	if _, ok := ta.rejected[r.Name]; ok {
		return Waiting, ""
	}
	return Unconcerned, ""
}

// Served looks up the resources as the cache serves them, under one lock.
func (c *Cache) Served(refs []Ref) []Served {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Served, len(refs))
	for i, r := range refs {
		out[i] = Served{Ref: r, Gateway: c.gw.defaultName, DefaultGateway: !c.gw.further}
		if ts := c.groups[r.Group][r.Type]; ts != nil {
			out[i].TypeVersion = ts.version()
			if res, _ := ts.resources.Lookup(r.Name); res != nil {
				out[i].Version = res.Version
			}
		}
	}
	return out
}

// serves reports whether the stream's gateway is the resource's.
func (st *streamAcks) serves(r Served) bool {
	return st.gateway == r.Gateway || st.gateway == "" && r.DefaultGateway
}
