// Package dag joins HTTPProxies, ExtensionServices, delegations, Services and
// Secrets into the graph that the translator turns into Envoy resources, and
// reports a status for every object it read.
//
// The package is pure: Build is a function of a snapshot and options, with no
// goroutines, clocks, package-level state or I/O. The graph it returns is
// never modified afterwards, so later stages may share it freely.
//
// EndpointSlices are deliberately not read here: endpoints join the graph
// only when ClusterLoadAssignments are built, so an endpoint change never
// rebuilds the graph.
package dag

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// DAG is the built graph.
type DAG struct {
	// VirtualHosts are served on the plain-HTTP listener, sorted by FQDN.
	VirtualHosts []*VirtualHost
	// SecureVirtualHosts are served on the HTTPS listener, one SNI filter
	// chain each, sorted by FQDN.
	SecureVirtualHosts []*SecureVirtualHost
	// Clusters are every cluster referenced by a route, a tcpproxy, an
	// authorization server or a DNS name, unique by name and sorted.
	Clusters []*Cluster
	// Secrets are the TLS certificates and CA bundles referenced by valid
	// objects, sorted by name.
	Secrets []*Secret
	// DNSNames are the names the DNS balancer answers, sorted.
	DNSNames []DNSName
	// Mesh is the mesh's selection of the graph (mesh.go), sorted by
	// Service; empty unless Options.Mesh is set. Its clusters are not in
	// Clusters: the ingress never serves them.
	Mesh []*MeshService
}

// VirtualHost is one host name on one listener.
type VirtualHost struct {
	// FQDN is the host name, lowercase.
	FQDN string
	// Proxy is the root HTTPProxy that owns the host name.
	Proxy types.NamespacedName
	// Routes are sorted most specific first, the order Envoy must see them.
	Routes []*Route
	// HostPolicies are the traffic policies of the whole host.
	HostPolicies
}

// SecureVirtualHost is a virtual host on the HTTPS listener.
type SecureVirtualHost struct {
	VirtualHost
	// Secret holds the server certificate; nil with passthrough.
	Secret *Secret
	// MinTLSVersion and MaxTLSVersion are "1.2" or "1.3".
	MinTLSVersion string
	MaxTLSVersion string
	// ClientCA, when set, requires client certificates signed by it.
	ClientCA *Secret
	// ClientAuth holds the other client certificate options; nil when
	// clientValidation sets none.
	ClientAuth *ClientAuth
	// Authorization, when set, checks each request with ext_authz.
	Authorization *Authorization
	// TCPProxy, when set, forwards the stream instead of serving routes.
	TCPProxy *TCPProxy
	// Passthrough forwards the still-encrypted stream to TCPProxy.
	Passthrough bool
	// FallbackCertificate, when set, also serves the host to TLS clients
	// without SNI, with this certificate (the --fallback-certificate
	// Secret): the host enabled it and passed its checks (fallback.go).
	FallbackCertificate *Secret
}

// Authorization is the ext_authz configuration of a secure virtual host.
type Authorization struct {
	// Cluster runs the authorization service.
	Cluster *Cluster
	// ExtensionService names the ExtensionService behind Cluster.
	ExtensionService types.NamespacedName
	// ResponseTimeout bounds each check.
	ResponseTimeout time.Duration
	// FailOpen lets requests through when the check cannot be made.
	FailOpen bool
	// Context is sent with every check; routes merge theirs over it.
	Context map[string]string
	// WithRequestBody, when set, buffers the body and sends it along.
	WithRequestBody *AuthorizationBody
}

// AuthorizationBody configures request-body buffering for ext_authz.
type AuthorizationBody struct {
	MaxRequestBytes     uint32
	AllowPartialMessage bool
	PackAsBytes         bool
}

// TCPProxy forwards a TCP stream to a cluster.
type TCPProxy struct {
	Cluster *Cluster
	// IdleTimeout is nil for Envoy's default; zero disables it.
	IdleTimeout *time.Duration
	// MaxConnections is 0 for no limit.
	MaxConnections int64
	// AccessLogFormat is "" for no access log; it passed
	// ValidateAccessLogFormat.
	AccessLogFormat string
}

// Route is one route of a virtual host, with the include conditions of
// every proxy it came through already folded into its match.
type Route struct {
	// Name is the route's name, "" when it has none.
	Name string
	// Proxy is the HTTPProxy that defines the route (not its root).
	Proxy types.NamespacedName
	// Index is the route's position in Proxy's spec.routes.
	Index int

	PathMatch         PathMatch
	HeaderMatches     []HeaderMatch
	QueryParamMatches []QueryParamMatch

	// Exactly one of Forward, Redirect and DirectResponse is set.
	Forward        *Forward
	Redirect       *Redirect
	DirectResponse *DirectResponse

	// HTTPSRedirect makes the plain-HTTP copy of a secure route answer with
	// a redirect to https.
	HTTPSRedirect bool
	Websocket     bool

	// ResponseTimeout and IdleTimeout are nil when unset; a zero duration
	// means no timeout at all.
	ResponseTimeout *time.Duration
	IdleTimeout     *time.Duration

	Retry         *Retry
	PrefixRewrite string
	// InternalRedirect has Envoy follow the backends' redirects.
	InternalRedirect *InternalRedirect
	// CookieRewrites apply to every backend's responses; a weighted
	// cluster's own override them cookie by cookie.
	CookieRewrites []CookieRewrite
	// HostRewrite replaces the Host header, from a Host entry in the
	// route's requestHeadersPolicy.
	HostRewrite string
	// HostRewriteHeader names the request header whose value replaces the
	// Host header, from a Host entry of "%REQ(name)%".
	HostRewriteHeader string
	// RequestHeaders and ResponseHeaders apply to every backend.
	RequestHeaders  *HeadersPolicy
	ResponseHeaders *HeadersPolicy
	HashPolicies    []HashPolicy

	// AuthDisabled turns ext_authz off for this route; AuthContext is the
	// route's context merged over the virtual host's.
	AuthDisabled bool
	AuthContext  map[string]string

	// RoutePolicies are the route's own traffic policies, each replacing
	// the virtual host's of the same kind.
	RoutePolicies
}

// matchOnly copies what identifies r and what it matches, with no action:
// the caller sets a new one. A route that cannot forward keeps its match
// this way, so its requests never fall through to a less specific route.
func (r *Route) matchOnly() *Route {
	return &Route{
		Name: r.Name, Proxy: r.Proxy, Index: r.Index,
		PathMatch: r.PathMatch, HeaderMatches: r.HeaderMatches, QueryParamMatches: r.QueryParamMatches,
	}
}

// PathMatchKind says how a path is matched.
type PathMatchKind uint8

// The kinds of path match.
const (
	// PathPrefix matches at segment boundaries: "/a" matches "/a" and "/a/b"
	// but not "/ab". A value ending in "/" matches as a plain prefix.
	PathPrefix PathMatchKind = iota
	PathExact
	PathRegex
)

// PathMatch is a route's path condition.
type PathMatch struct {
	Kind  PathMatchKind
	Value string
}

// StringMatchKind says how a header or query value is matched.
type StringMatchKind uint8

// The kinds of string match.
const (
	MatchPresent StringMatchKind = iota
	MatchExact
	MatchPrefix
	MatchContains
	MatchRegex
)

// HeaderMatch is one header condition.
type HeaderMatch struct {
	Name       string
	Kind       StringMatchKind
	Value      string
	Invert     bool
	IgnoreCase bool
}

// QueryParamMatch is one query-parameter condition.
type QueryParamMatch struct {
	Name       string
	Kind       StringMatchKind
	Value      string
	IgnoreCase bool
}

// Forward sends requests to backends.
type Forward struct {
	// Cluster is set when all services merge into one cluster whose
	// localities carry the weights (site/architecture.md, decision 2).
	Cluster *Cluster
	// Weighted is set instead when some service needs per-service route
	// state (its own header policies): one cluster per service, split by
	// route-level weighted_clusters.
	Weighted []WeightedCluster
	// Mirrors receive copies of the requests.
	Mirrors []Mirror
	// Merged is the route's whole backend set as one cluster, used for its
	// DNS name even when the route itself needs Weighted.
	Merged *Cluster
}

// WeightedCluster is one service's share when a route splits at route level.
type WeightedCluster struct {
	Cluster         *Cluster
	Weight          uint32
	RequestHeaders  *HeadersPolicy
	ResponseHeaders *HeadersPolicy
	// HostRewrite replaces the Host header for this service only.
	HostRewrite string
	// CookieRewrites are this service's own.
	CookieRewrites []CookieRewrite
}

// Mirror copies a percentage of requests to a cluster.
type Mirror struct {
	Cluster *Cluster
	// Percent is 0 to 100.
	Percent uint32
}

// Redirect answers with an HTTP redirect.
type Redirect struct {
	Scheme     string
	Hostname   string
	Port       uint32
	StatusCode uint32
	Path       string
	Prefix     string
}

// DirectResponse answers with a fixed status and body.
type DirectResponse struct {
	StatusCode uint32
	Body       string
}

// Retry is a route's retry policy.
type Retry struct {
	Count                uint32
	PerTryTimeout        *time.Duration
	RetryOn              []string
	RetriableStatusCodes []uint32
}

// HeadersPolicy sets and removes headers.
type HeadersPolicy struct {
	// Set is sorted by name.
	Set    []HeaderValue
	Remove []string
}

// HeaderValue is one header to set.
type HeaderValue struct {
	Name  string
	Value string
}

// HashPolicy is one input of the request hash. Exactly one of Header,
// QueryParameter, SourceIP and Cookie is set.
type HashPolicy struct {
	Terminal       bool
	Header         string
	QueryParameter string
	SourceIP       bool
	// Cookie is the name of a session-affinity cookie Envoy sets when the
	// request has none (the Cookie load-balancing strategy).
	Cookie string
}

// Cluster is a set of backends Envoy treats as one upstream. Its name is a
// readable prefix plus a hash of Spec, so equal specs share a cluster.
type Cluster struct {
	Name string
	Spec ClusterSpec
}

// ClusterSpec is everything that makes two clusters differ. Every field is
// part of the cluster's identity: the hash covers the whole struct, as
// json.Marshal writes it. appendClusterSpec writes those bytes by hand, and
// TestAppendClusterSpecEqualsJSON fails if it leaves out a field added here.
type ClusterSpec struct {
	// Backends are sorted by priority, then namespace, name and port.
	Backends []Backend
	// Protocol is "" (HTTP/1.1), "h2", "h2c" or "tls".
	Protocol string
	// UpstreamTLS verifies the backends' certificates.
	UpstreamTLS *UpstreamTLS
	// LoadBalancer is one of the LB* strategies.
	LoadBalancer string
	// HealthCheck actively checks endpoints; nil for none.
	HealthCheck *HealthCheck
	// IdleConnectionTimeout is nil when unset.
	IdleConnectionTimeout *time.Duration
	// CircuitBreakers is nil for Envoy's defaults.
	CircuitBreakers *CircuitBreakers
	// SlowStart ramps new endpoints up; omitted from the cluster hash when
	// nil, so that adding it renamed no cluster.
	SlowStart *SlowStart `json:",omitempty"`
	// ClientCertificate is the SDS name of the Secret whose certificate
	// Envoy presents to TLS backends; "" for none. Left out of the hash
	// when empty, so that adding the field renamed no existing cluster.
	ClientCertificate string `json:",omitempty"`
	// SNI is the server name sent to a TLS backend when it is not the
	// validation's subjectName: for an ExternalName Service, the Host the
	// route rewrites to, else the external name. Left out of the hash when
	// empty, so that adding the field renamed no existing cluster.
	SNI string `json:",omitempty"`
}

// ExternalName returns the DNS name and port of a cluster whose one backend
// is an ExternalName Service: such a cluster resolves the name itself
// (STRICT_DNS) instead of taking endpoints over EDS. The builder never puts
// an ExternalName backend in a cluster with other backends.
func (s *ClusterSpec) ExternalName() (host string, port int32, ok bool) {
	if len(s.Backends) != 1 || s.Backends[0].ExternalName == "" {
		return "", 0, false
	}
	b := s.Backends[0]
	return b.ExternalName, b.Port, true
}

// The load-balancing strategies a cluster may use.
const (
	LBRoundRobin           = "RoundRobin"
	LBRandom               = "Random"
	LBWeightedLeastRequest = "WeightedLeastRequest"
	LBCookie               = "Cookie"
	LBRequestHash          = "RequestHash"
)

// Backend is one Kubernetes Service port in a cluster.
type Backend struct {
	Service types.NamespacedName
	// Port is the Service's port number (spec.ports[].port).
	Port int32
	// Weight is the backend's share among backends of the same priority;
	// never 0 (zero-weight services are left out).
	Weight uint32
	// Priority is the failover level, 0 for the primary.
	Priority uint32
	// HealthPort is the Service port health checks go to, 0 for Port;
	// omitted from the cluster hash when 0.
	HealthPort int32 `json:",omitempty"`
	// ExternalName is spec.externalName of a Service of type ExternalName
	// (without a trailing dot), "" for any other Service; omitted from the
	// cluster hash when empty.
	ExternalName string `json:",omitempty"`
}

// UpstreamTLS verifies a backend's certificate.
type UpstreamTLS struct {
	// CASecret is the name of the validation-context Secret resource.
	CASecret    string
	SubjectName string
	// SubjectNames, when set, are the names a certificate may carry
	// instead of SubjectName alone (SubjectName is the first); omitted
	// from the cluster hash when empty, so no existing cluster is renamed.
	SubjectNames []string `json:",omitempty"`
}

// HealthCheck is an active health check.
type HealthCheck struct {
	// Path is set for HTTP checks, empty for TCP checks.
	Path               string
	Host               string
	Interval           time.Duration
	Timeout            time.Duration
	UnhealthyThreshold uint32
	HealthyThreshold   uint32
	// ExpectedStatuses are the healthy statuses; empty means 200.
	ExpectedStatuses []StatusRange `json:",omitempty"`
}

// CircuitBreakers caps load on a cluster; zero fields keep Envoy's defaults.
type CircuitBreakers struct {
	MaxConnections     uint32
	MaxPendingRequests uint32
	MaxRequests        uint32
	MaxRetries         uint32
	// MaxRetriesSet tells an explicit 0 from unset.
	MaxRetriesSet bool
	// PerHostMaxConnections caps the connections to each endpoint. Left
	// out of the cluster hash when 0, so that adding it renamed no cluster.
	PerHostMaxConnections uint32 `json:",omitempty"`
}

// SecretKind says what a Secret resource carries.
type SecretKind uint8

// The kinds of Secret resource.
const (
	// SecretTLS is a certificate and private key.
	SecretTLS SecretKind = iota
	// SecretCA is a CA bundle used to verify peers.
	SecretCA
)

// Secret is one SDS resource made from a Kubernetes Secret.
type Secret struct {
	// Name is the SDS resource name: "namespace/name" for certificates,
	// "namespace/name/ca" for CA bundles.
	Name   string
	Kind   SecretKind
	Source types.NamespacedName
	// Cert and Key are PEM (Key only for SecretTLS); for SecretCA, Cert
	// holds the CA bundle.
	Cert []byte
	Key  []byte
}

// DNSName is a name the DNS balancer answers, with the cluster whose
// endpoints it returns.
type DNSName struct {
	Name    string
	Cluster *Cluster
}
