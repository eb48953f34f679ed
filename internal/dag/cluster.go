package dag

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// maxClusterNameLen bounds cluster names (site/architecture.md, decision 1); the hash
// takes 17 characters, the readable prefix the rest.
const maxClusterNameLen = 60

// clusterHashLen is the number of hex characters of the spec hash in a
// cluster name: 64 bits, so that two different specs in one build collide
// with negligible probability. Assemble still checks, and reports, a clash.
const clusterHashLen = 16

// NewCluster names a spec: a readable prefix from its first backend plus a
// hash of the whole canonical spec, so that equal specs share a cluster and
// any difference, in any field, makes a different one.
func NewCluster(spec ClusterSpec) *Cluster {
	return &Cluster{Name: clusterName(spec), Spec: spec}
}

func clusterName(spec ClusterSpec) string {
	// The canonical spec is its JSON as json.Marshal writes it (fields in
	// declaration order; backends are already sorted by the builder),
	// written by hand into a buffer on the stack: there is one name per
	// cluster of every route.
	var js [1024]byte
	sum := sha256.Sum256(appendClusterSpec(js[:0], &spec))
	var nb [2 * maxClusterNameLen]byte
	name := appendClusterPrefix(nb[:0], &spec)
	if max := maxClusterNameLen - clusterHashLen - 1; len(name) > max {
		name = name[:max]
	}
	name = append(name, '/')
	name = hex.AppendEncode(name, sum[:clusterHashLen/2])
	return string(name)
}

// appendClusterPrefix appends the readable part of a cluster's name: the
// first backend's namespace, name and port, and how many others there are.
func appendClusterPrefix(b []byte, spec *ClusterSpec) []byte {
	if len(spec.Backends) == 0 {
		return append(b, "empty"...)
	}
	first := &spec.Backends[0]
	b = append(b, first.Service.Namespace...)
	b = append(b, '/')
	b = append(b, first.Service.Name...)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(first.Port), 10)
	if n := len(spec.Backends); n > 1 {
		b = append(b, '+')
		b = strconv.AppendInt(b, int64(n-1), 10)
	}
	return b
}

// sortBackends puts backends in canonical order: priority, then service,
// then port.
func sortBackends(bs []Backend) {
	// slices.SortFunc, not sort.Slice, whose swapper allocates: every
	// route sorts its backends. Both sort the same way.
	slices.SortFunc(bs, func(a, b Backend) int {
		if a.Priority != b.Priority {
			return cmp.Compare(a.Priority, b.Priority)
		}
		if a.Service != b.Service {
			return cmp.Or(strings.Compare(a.Service.Namespace, b.Service.Namespace), strings.Compare(a.Service.Name, b.Service.Name))
		}
		return cmp.Compare(a.Port, b.Port)
	})
}

// serviceRef is a resolved reference to a Service port.
type serviceRef struct {
	Service *objects.Service
	Port    corev1.ServicePort
}

// resolveService finds a Service port, or returns the reason it cannot be
// used. These are reference errors: the Service may appear later. A
// Service of type ExternalName is resolved like any other; whether it may
// be used is the caller's decision (see externalNameBackend).
func resolveService(snap *objects.Snapshot, deps *depSet, nn types.NamespacedName, port int32) (*serviceRef, *refError) {
	deps.add(objects.NewKey(objects.KindService, nn))
	svc := snap.Services[nn]
	if svc == nil {
		return nil, &refError{"ServiceNotFound", fmt.Sprintf("Service %s not found", nn)}
	}
	for _, p := range svc.Spec.Ports {
		if p.Port == port && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
			return &serviceRef{Service: svc, Port: p}, nil
		}
	}
	return nil, &refError{"ServicePortNotFound", fmt.Sprintf("Service %s has no TCP port %d (it has %s)", nn, port, servicePorts(svc))}
}

// externalNameBackend decides whether a forward may use an ExternalName
// Service and returns its DNS name. The API server and the directory
// source both check that the name is a DNS-1123 subdomain; it is checked
// again here since a snapshot may come from anywhere.
func externalNameBackend(svc *objects.Service, enabled bool, extension bool) (string, *refError) {
	nn := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
	switch {
	case extension:
		return "", &refError{"ServiceExternalName", fmt.Sprintf("Service %s is of type ExternalName, which an ExtensionService cannot use: use a Service whose endpoints are Pods (with a selector or EndpointSlices)", nn)}
	case !enabled:
		return "", &refError{"ServiceExternalName", fmt.Sprintf("Service %s is of type ExternalName, which is off: start switchyard with --enable-external-name-services to forward to it (off by default, since an ExternalName can name any host, the control plane's and cloud metadata endpoints included; see site/external-name.md)", nn)}
	}
	name := strings.TrimSuffix(svc.Spec.ExternalName, ".")
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", &refError{"InvalidExternalName", fmt.Sprintf("Service %s: spec.externalName %q is not a DNS name: %s", nn, svc.Spec.ExternalName, strings.Join(errs, "; "))}
	}
	return name, nil
}

func servicePorts(svc *objects.Service) string {
	if len(svc.Spec.Ports) == 0 {
		return "no ports"
	}
	ps := make([]string, 0, len(svc.Spec.Ports))
	for _, p := range svc.Spec.Ports {
		ps = append(ps, fmt.Sprintf("%d/%s", p.Port, strings.ToLower(string(orTCP(p.Protocol)))))
	}
	return strings.Join(ps, ", ")
}

func orTCP(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

// protocolFromAppProtocol reads the upstream protocol a Service port
// declares, used when the route does not say.
func protocolFromAppProtocol(p corev1.ServicePort) string {
	if p.AppProtocol == nil {
		return ""
	}
	switch *p.AppProtocol {
	case "h2c", "kubernetes.io/h2c":
		return "h2c"
	case "h2":
		return "h2"
	case "https", "tls":
		return "tls"
	}
	return ""
}

// depSet records the keys a unit of the build read, including keys of
// objects that were missing, so that their later arrival triggers a rebuild.
type depSet struct {
	m map[objects.Key]struct{}
}

func newDepSet() *depSet { return &depSet{m: map[objects.Key]struct{}{}} }

func (d *depSet) add(k objects.Key) { d.m[k] = struct{}{} }

// sorted returns the keys in canonical order.
func (d *depSet) sorted() []objects.Key {
	out := make([]objects.Key, 0, len(d.m))
	for k := range d.m {
		out = append(out, k)
	}
	slices.SortFunc(out, objects.Key.Compare)
	return out
}
