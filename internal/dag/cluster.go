package dag

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	// json.Marshal of a struct is canonical: fields in declaration order,
	// map keys sorted. Backends are already sorted by the builder.
	b, err := json.Marshal(spec)
	if err != nil {
		// ClusterSpec holds only strings, integers and pointers to them.
		panic(fmt.Sprintf("dag: cannot marshal ClusterSpec: %v", err))
	}
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])[:clusterHashLen]
	prefix := clusterPrefix(spec)
	if max := maxClusterNameLen - clusterHashLen - 1; len(prefix) > max {
		prefix = prefix[:max]
	}
	return prefix + "/" + hash
}

func clusterPrefix(spec ClusterSpec) string {
	if len(spec.Backends) == 0 {
		return "empty"
	}
	b := spec.Backends[0]
	p := b.Service.Namespace + "/" + b.Service.Name + "/" + strconv.Itoa(int(b.Port))
	if n := len(spec.Backends); n > 1 {
		p += "+" + strconv.Itoa(n-1)
	}
	return p
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
