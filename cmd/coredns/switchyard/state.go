package switchyard

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	envoy_config_cluster_v3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	envoy_config_core_v3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoy_config_endpoint_v3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	envoy_service_discovery_v3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// The xDS types the plugin subscribes to.
const (
	typeCluster  = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	typeEndpoint = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
)

// xdsType indexes per-type state.
type xdsType int

const (
	cds xdsType = iota
	eds
	numTypes
)

var typeNames = [numTypes]string{"cds", "eds"}

func (t xdsType) String() string { return typeNames[t] }

// typeState is what state-of-the-world xDS keeps per type: the version of
// the last accepted response and the nonce of the last response.
type typeState struct {
	version string
	nonce   string
}

// xdsState is the client's view of the control plane: the accepted
// clusters and assignments and the per-type ACK state. It has no I/O and
// no goroutines — handle turns a response into the requests to send back —
// so the protocol can be tested and fuzzed without a stream.
//
// Acceptance is per resource, as in gRPC's xDS client (gRFC A46): a
// response with some invalid resources applies the valid ones, keeps the
// last accepted version of each invalid one, and is NACKed with an
// error_detail that names every rejected resource. Bad input never takes
// down good input. A response that cannot be read at all, or a Cluster
// response with a resource whose name cannot be read (which, the type
// being full-state, would otherwise delete clusters), changes nothing.
type xdsState struct {
	node        *envoy_config_core_v3.Node
	clusters    map[string]*clusterInfo // by cluster name = DNS name
	assignments map[string]*assignment  // by EDS service name
	types       [numTypes]typeState
	// subscribed are the EDS names last requested, sorted; edsRequested
	// says whether an EDS request went out on the current stream.
	subscribed   []string
	edsRequested bool
	// cdsSeen is set by the first accepted (or partly accepted) CDS
	// response: from then on the table reflects the control plane.
	cdsSeen bool
}

func newXDSState(node *envoy_config_core_v3.Node) *xdsState {
	return &xdsState{
		node:        node,
		clusters:    map[string]*clusterInfo{},
		assignments: map[string]*assignment{},
	}
}

// outcome describes what handling one response did.
type outcome struct {
	typ     xdsType
	known   bool // the response was of a subscribed type
	acked   bool
	changed bool // the table must be rebuilt
	detail  string
}

// streamStart returns the requests that open a new stream: a wildcard CDS
// request and, when clusters are known, their EDS subscription. Both
// carry the last accepted versions and no nonce, so a control plane that
// still serves the same content (versions come from content in
// Switchyard) does not resend it. The EDS version is sent only when every
// subscribed name has an assignment, otherwise a server comparing versions
// could leave a warming cluster without endpoints.
func (s *xdsState) streamStart() []*envoy_service_discovery_v3.DiscoveryRequest {
	for t := range s.types {
		s.types[t].nonce = ""
	}
	s.edsRequested = false
	out := []*envoy_service_discovery_v3.DiscoveryRequest{s.request(cds, nil, nil)}
	if len(s.subscribed) > 0 {
		version := s.types[eds].version
		for _, n := range s.subscribed {
			if s.assignments[n] == nil {
				version = ""
				break
			}
		}
		req := s.request(eds, s.subscribed, nil)
		req.VersionInfo = version
		s.edsRequested = true
		out = append(out, req)
	}
	return out
}

func (s *xdsState) request(t xdsType, names []string, nack error) *envoy_service_discovery_v3.DiscoveryRequest {
	req := &envoy_service_discovery_v3.DiscoveryRequest{
		Node:          s.node,
		TypeUrl:       [numTypes]string{typeCluster, typeEndpoint}[t],
		VersionInfo:   s.types[t].version,
		ResponseNonce: s.types[t].nonce,
		ResourceNames: names,
	}
	if nack != nil {
		req.ErrorDetail = &status.Status{Code: int32(codes.InvalidArgument), Message: truncate(nack.Error(), maxErrorDetail)}
	}
	return req
}

// maxErrorDetail bounds the NACK message: a response with thousands of
// bad resources must not produce a request larger than the response.
const maxErrorDetail = 4096

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// handle applies one response and returns the requests to send: the ACK
// or NACK, and after a cluster change the new EDS subscription.
func (s *xdsState) handle(resp *envoy_service_discovery_v3.DiscoveryResponse) ([]*envoy_service_discovery_v3.DiscoveryRequest, outcome) {
	var t xdsType
	switch resp.GetTypeUrl() {
	case typeCluster:
		t = cds
	case typeEndpoint:
		t = eds
	default:
		// Never subscribed: answering with a request of that type would
		// subscribe to it (an empty name list is a wildcard), so it is
		// left unanswered.
		return nil, outcome{detail: "ignored a response of unsubscribed type " + resp.GetTypeUrl()}
	}
	s.types[t].nonce = resp.GetNonce()
	var err error
	var changed bool
	if t == cds {
		changed, err = s.applyClusters(resp)
	} else {
		changed, err = s.applyAssignments(resp)
	}
	o := outcome{typ: t, known: true, changed: changed, acked: err == nil}
	if err != nil {
		o.detail = err.Error()
	} else {
		s.types[t].version = resp.GetVersionInfo()
	}
	out := []*envoy_service_discovery_v3.DiscoveryRequest{s.request(t, s.namesFor(t), err)}
	if t == cds {
		if names := s.serviceNames(); !slices.Equal(names, s.subscribed) || (!s.edsRequested && len(names) > 0) {
			s.subscribed = names
			s.edsRequested = true
			out = append(out, s.request(eds, names, nil))
		}
	}
	return out, o
}

// namesFor is the resource_names of a request of the type: CDS is a
// wildcard subscription (legacy form, understood by every server), EDS
// names every cluster's service.
func (s *xdsState) namesFor(t xdsType) []string {
	if t == cds {
		return nil
	}
	return s.subscribed
}

func (s *xdsState) serviceNames() []string {
	seen := make(map[string]bool, len(s.clusters))
	names := make([]string, 0, len(s.clusters))
	for _, c := range s.clusters {
		if c.cname == "" && !seen[c.serviceName] {
			seen[c.serviceName] = true
			names = append(names, c.serviceName)
		}
	}
	sort.Strings(names)
	return names
}

// resourceError names one rejected resource.
type resourceError struct {
	index int
	name  string
	err   error
}

func (e resourceError) Error() string {
	if e.name == "" {
		return fmt.Sprintf("resource %d: %v", e.index, e.err)
	}
	return fmt.Sprintf("resource %d %q: %v", e.index, e.name, e.err)
}

// rejected joins resource errors into one NACK message.
func rejected(typ string, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("switchyard-coredns rejected %d %s resource(s): %s", len(errs), typ, strings.Join(msgs, "; "))
}

func unpack(a *anypb.Any, want string, m proto.Message) error {
	if a.GetTypeUrl() != want {
		return fmt.Errorf("type %q in a %s response", a.GetTypeUrl(), want)
	}
	return proto.Unmarshal(a.GetValue(), m)
}

// applyClusters applies a CDS response, which holds every cluster: those
// left out are deleted, with their assignments.
func (s *xdsState) applyClusters(resp *envoy_service_discovery_v3.DiscoveryResponse) (bool, error) {
	next := make(map[string]*clusterInfo, len(resp.GetResources()))
	var errs []error
	for i, r := range resp.GetResources() {
		c := &envoy_config_cluster_v3.Cluster{}
		if err := unpack(r, typeCluster, c); err != nil {
			// Without a name the cluster cannot be kept at its last good
			// version, and leaving it out would delete it.
			return false, rejected("Cluster", []error{resourceError{index: i, err: fmt.Errorf("%w; nothing in this response was applied", err)}})
		}
		name := c.GetName()
		if _, dup := next[name]; dup {
			errs = append(errs, resourceError{i, name, errors.New("duplicate name")})
			continue
		}
		info, err := decodeCluster(c, resp.GetVersionInfo())
		if err != nil {
			errs = append(errs, resourceError{i, name, err})
			// Keep the last good version, as if this response had not
			// touched it; a name never accepted stays unknown.
			if old := s.clusters[name]; old != nil {
				next[name] = old
			} else {
				next[name] = nil
			}
			continue
		}
		if old := s.clusters[name]; old != nil && old.serviceName == info.serviceName && old.localityWeighted == info.localityWeighted && old.cname == info.cname {
			// Nothing the plugin uses changed: keeping the pointer keeps
			// the table entry, and version stays the one it changed at.
			info = old
		}
		next[name] = info
	}
	changed := !s.cdsSeen || len(next) != len(s.clusters)
	for name, c := range next {
		if c == nil {
			delete(next, name)
			changed = true
			continue
		}
		if s.clusters[name] != c {
			changed = true
		}
	}
	s.clusters = next
	s.cdsSeen = true
	// Assignments of services no cluster names any more are dropped.
	live := make(map[string]bool, len(next))
	for _, c := range next {
		if c.cname == "" {
			live[c.serviceName] = true
		}
	}
	for name := range s.assignments {
		if !live[name] {
			delete(s.assignments, name)
			changed = true
		}
	}
	return changed, rejected("Cluster", errs)
}

// applyAssignments applies an EDS response. EDS is not full-state: a
// response carries the assignments that changed, and one left out keeps
// its last version.
func (s *xdsState) applyAssignments(resp *envoy_service_discovery_v3.DiscoveryResponse) (bool, error) {
	wanted := make(map[string]bool, len(s.subscribed))
	for _, n := range s.subscribed {
		wanted[n] = true
	}
	var errs []error
	changed := false
	seen := map[string]bool{}
	for i, r := range resp.GetResources() {
		cla := &envoy_config_endpoint_v3.ClusterLoadAssignment{}
		if err := unpack(r, typeEndpoint, cla); err != nil {
			errs = append(errs, resourceError{index: i, err: err})
			continue
		}
		name := cla.GetClusterName()
		if !wanted[name] {
			// Not (or no longer) subscribed: a response racing an
			// unsubscription. Storing it would keep it forever.
			continue
		}
		if seen[name] {
			errs = append(errs, resourceError{i, name, errors.New("duplicate cluster_name")})
			continue
		}
		seen[name] = true
		a, err := decodeAssignment(cla, resp.GetVersionInfo())
		if err != nil {
			// The last good assignment, if any, stays.
			errs = append(errs, resourceError{i, name, err})
			continue
		}
		s.assignments[name] = a
		changed = true
	}
	return changed, rejected("ClusterLoadAssignment", errs)
}

// warm reports whether every cluster has its assignment.
func (s *xdsState) warm() bool {
	for _, c := range s.clusters {
		if c.cname == "" && s.assignments[c.serviceName] == nil {
			return false
		}
	}
	return true
}

// buildTable makes the table for the current state.
func (s *xdsState) buildTable(prev *table, now time.Time) *table {
	return buildTable(prev, s.clusters, s.assignments, s.types[cds].version, s.types[eds].version, now)
}
