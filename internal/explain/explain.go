// Package explain answers "what would happen to this request?" from the xDS
// resources Switchyard serves, not from the DAG they were built from: it
// walks them the way Envoy (or a proxyless gRPC client) does — listener,
// filter chain, scope, virtual host, routes in order, HTTP filters, cluster,
// priorities, localities, endpoints — and records every decision with its
// reason. When the answer is an error (404, 503, a refused handshake), the
// result names the HTTPProxy and the field to fix, from the metadata the
// translator puts on virtual hosts and routes.
//
// The package is pure: Explain is a function of the resources and the
// request. The Result is plain data that marshals to JSON, which is what
// the admin endpoint serves and what `switchyard explain -o json` prints.
package explain

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Groups are the consumer groups whose resources can be explained.
var Groups = []string{"envoy", "grpc"}

// Header is one request header.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Request is the request to explain.
type Request struct {
	// URL is the full URL: its scheme picks the listener (http or https),
	// its host the SNI and, unless a Host header is given, :authority.
	URL     string   `json:"url"`
	Method  string   `json:"method,omitempty"`
	Headers []Header `json:"headers,omitempty"`
	// SourceIP is the client's address, for filters that look at it.
	SourceIP string `json:"sourceIP,omitempty"`
	// Group is the consumer group whose view is explained: envoy (the
	// default) or grpc.
	Group string `json:"group,omitempty"`
}

// Result is the explanation of one request.
type Result struct {
	Request  Normalized `json:"request"`
	Group    string     `json:"group"`
	Decision Decision   `json:"decision"`
	// Listener is where the connection lands; nil when none would accept it.
	Listener *ListenerStep `json:"listener,omitempty"`
	// RouteConfig is the route configuration chosen for the request.
	RouteConfig *RouteConfigStep `json:"routeConfig,omitempty"`
	VirtualHost *VirtualHostStep `json:"virtualHost,omitempty"`
	// Routes are the routes tried, in order, up to and including the one
	// that matched.
	Routes   []RouteCheck `json:"routes,omitempty"`
	Policies []Policy     `json:"policies,omitempty"`
	Backends []Backend    `json:"backends,omitempty"`
	// Notes are what the explanation could not be exact about.
	Notes []string `json:"notes,omitempty"`
}

// Normalized is the request as the data plane sees it.
type Normalized struct {
	Scheme    string   `json:"scheme"`
	Authority string   `json:"authority"`
	SNI       string   `json:"sni,omitempty"`
	Port      uint32   `json:"port,omitempty"`
	Method    string   `json:"method"`
	Path      string   `json:"path"`
	Headers   []Header `json:"headers,omitempty"`
	SourceIP  string   `json:"sourceIP,omitempty"`
}

// Decision kinds.
const (
	// KindForward: the request reaches a backend.
	KindForward = "forward"
	// KindRedirect: the route answers with a redirect.
	KindRedirect = "redirect"
	// KindDirect: the route answers itself (direct_response).
	KindDirect = "direct_response"
	// KindNotFound: no virtual host or no route; Envoy answers 404.
	KindNotFound = "not_found"
	// KindUnavailable: the route cannot reach a backend; Envoy answers 503.
	KindUnavailable = "unavailable"
	// KindForbidden: a filter refuses the request.
	KindForbidden = "forbidden"
	// KindRefused: no listener or filter chain takes the connection.
	KindRefused = "connection_refused"
)

// Decision is the outcome: what the client gets, why, and what to change.
type Decision struct {
	Kind string `json:"kind"`
	// Status is the HTTP status the client sees, 0 when no HTTP response is
	// sent at all.
	Status int    `json:"status,omitempty"`
	Reason string `json:"reason"`
	// Location is where a redirect points.
	Location string `json:"location,omitempty"`
	// Fix names the object and field to change, when the decision is an
	// error a change of configuration would fix.
	Fix   string `json:"fix,omitempty"`
	Owner *Owner `json:"owner,omitempty"`
	// Conditional is set when the outcome depends on something the resources
	// do not say, such as an authorization server's answer.
	Conditional string `json:"conditional,omitempty"`
}

// Owner is the HTTPProxy (and route) a resource came from.
type Owner struct {
	HTTPProxy string `json:"httpproxy"`
	// Field is the route's field path, "spec.routes[2]"; empty for a
	// virtual host.
	Field string `json:"field,omitempty"`
	// Problems are the errors in that HTTPProxy's status, when known.
	Problems []string `json:"problems,omitempty"`
}

// String names the owner as a reader would look it up: "HTTPProxy
// namespace/name spec.routes[i]".
func (o *Owner) String() string {
	if o == nil {
		return ""
	}
	if o.Field == "" {
		return "HTTPProxy " + o.HTTPProxy
	}
	return "HTTPProxy " + o.HTTPProxy + " " + o.Field
}

// ListenerStep is the listener and filter chain that accept the connection.
type ListenerStep struct {
	Name        string `json:"name"`
	Port        uint32 `json:"port,omitempty"`
	FilterChain string `json:"filterChain,omitempty"`
	// Why says how the listener and filter chain were chosen.
	Why string `json:"why"`
}

// RouteConfigStep is the route configuration and how it was found.
type RouteConfigStep struct {
	Name string `json:"name"`
	// Via is "scoped_routes", "rds" or "inline".
	Via string `json:"via"`
	Why string `json:"why"`
}

// VirtualHostStep is the virtual host that matched the authority.
type VirtualHostStep struct {
	Name string `json:"name"`
	// Domain is the domain pattern that matched.
	Domain string `json:"domain"`
	Why    string `json:"why"`
	Owner  *Owner `json:"owner,omitempty"`
}

// RouteCheck is one route tried against the request.
type RouteCheck struct {
	// Index is the route's position in the virtual host.
	Index int    `json:"index"`
	Name  string `json:"name,omitempty"`
	// Match describes the route's match.
	Match   string `json:"match"`
	Matched bool   `json:"matched"`
	// Why is the first condition that failed, or what matched.
	Why    string `json:"why"`
	Action string `json:"action"`
	Owner  *Owner `json:"owner,omitempty"`
}

// Policy is what one HTTP filter does to the request on its way.
type Policy struct {
	Filter string `json:"filter"`
	// Kind is what the filter is ("ext_authz", ...), "unknown" when this
	// package does not know it.
	Kind string `json:"kind"`
	// Effect is "applies", "skipped" (disabled for this route) or
	// "unknown".
	Effect string `json:"effect"`
	Detail string `json:"detail"`
	// Level is where the per-route setting came from: "route",
	// "virtual host", "route configuration", or "" for the filter's own.
	Level string `json:"level,omitempty"`
}

// Explain walks the resources for the request. It fails only when the
// request itself cannot be read (a bad URL, an unknown group); everything
// about the resources, however wrong, is part of the result.
func Explain(res *Resources, req Request) (*Result, error) {
	n, err := normalize(req)
	if err != nil {
		return nil, err
	}
	group := req.Group
	if group == "" {
		group = "envoy"
	}
	w := &walk{res: res, req: n, out: &Result{Request: n.Normalized, Group: group}}
	switch group {
	case "envoy":
		w.envoy()
	case "grpc":
		// Every RPC is a POST; a --method given for gRPC would mislead the
		// header matchers on :method.
		w.req.Method, w.out.Request.Method = "POST", "POST"
		w.grpc()
	default:
		return nil, fmt.Errorf("unknown group %q: use one of %v", group, Groups)
	}
	if k := w.out.Decision.Kind; len(w.conditional) > 0 && k != KindRefused {
		w.out.Decision.Conditional = strings.Join(w.conditional, "; ")
	}
	return w.out, nil
}

// request is a Normalized request with what the matchers need parsed out.
type request struct {
	Normalized
	host string // the authority without port, lowercase
	// headers are keyed by lowercase name, values in order.
	headers map[string][]string
	query   string
}

func normalize(req Request) (*request, error) {
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, fmt.Errorf("--url %q: %w", req.URL, err)
	}
	if u.Scheme == "xds" && u.Host == "" {
		// xds:///authority/service/method: the authority is the path's first
		// segment, as gRPC reads its target.
		rest := strings.TrimPrefix(u.Path, "/")
		u.Host, u.Path, _ = strings.Cut(rest, "/")
		u.Path = "/" + u.Path
		u.RawPath = ""
	}
	if u.Host == "" {
		return nil, fmt.Errorf("--url %q: no host; give a full URL such as https://shop.example.com/", req.URL)
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "http", "https", "xds":
	default:
		return nil, fmt.Errorf("--url %q: scheme %q: use http, https (or xds for the grpc group)", req.URL, u.Scheme)
	}
	n := &request{headers: map[string][]string{}}
	n.Scheme = scheme
	n.Method = strings.ToUpper(req.Method)
	if n.Method == "" {
		n.Method = "GET"
	}
	if scheme == "https" {
		n.SNI = strings.ToLower(u.Hostname())
	}
	if p := u.Port(); p != "" {
		var port uint32
		if _, err := fmt.Sscanf(p, "%d", &port); err != nil || port == 0 || port > 65535 {
			return nil, fmt.Errorf("--url %q: port %q is not a port number", req.URL, p)
		}
		n.Port = port
	}
	n.Authority = u.Host
	n.Path = u.EscapedPath()
	if n.Path == "" {
		n.Path = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		n.query = u.RawQuery
		n.Path += "?" + u.RawQuery
	}
	for _, h := range req.Headers {
		name := strings.ToLower(strings.TrimSpace(h.Name))
		if name == "" {
			return nil, fmt.Errorf("header %q: empty name", h.Name)
		}
		if name == "host" || name == ":authority" {
			n.Authority = h.Value
			continue
		}
		n.headers[name] = append(n.headers[name], h.Value)
		n.Headers = append(n.Headers, Header{Name: name, Value: h.Value})
	}
	if req.SourceIP != "" {
		if net.ParseIP(req.SourceIP) == nil {
			return nil, fmt.Errorf("--source-ip %q is not an IP address", req.SourceIP)
		}
		n.SourceIP = req.SourceIP
	}
	n.host = strings.ToLower(n.Authority)
	if h, _, err := net.SplitHostPort(n.host); err == nil {
		n.host = h
	}
	return n, nil
}

// header returns a header the way Envoy's matchers read it: every value
// joined with ",", and the pseudo-headers from the request line.
func (r *request) header(name string) (string, bool) {
	switch name {
	case ":authority", "host":
		return r.Authority, true
	case ":path":
		return r.Path, true
	case ":method":
		return r.Method, true
	case ":scheme":
		return r.Scheme, true
	}
	v, ok := r.headers[name]
	return strings.Join(v, ","), ok
}

// walk carries one explanation through its steps.
type walk struct {
	res *Resources
	req *request
	out *Result
	// conditional collects what the outcome depends on besides the
	// resources; it goes into the decision at the end.
	conditional []string
}

func (w *walk) decide(d Decision) { w.out.Decision = d }

func (w *walk) note(format string, args ...any) {
	w.out.Notes = append(w.out.Notes, fmt.Sprintf(format, args...))
}
