package k8ssource

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	switchyardv1alpha1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1alpha1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// secretRefs counts the references to each Secret. The source passes a
// Secret on to builds only while some object references it, so that the
// snapshot (and every build) holds the few certificates in use, not every
// Secret of the cluster; a Secret that becomes referenced later is passed
// on at that moment, from the informer's cache.
type secretRefs struct {
	by    map[objects.Key][]types.NamespacedName
	count map[types.NamespacedName]int
	// pinned are referenced by the configuration itself (Config.Secrets).
	pinned map[types.NamespacedName]bool
}

func newSecretRefs(pinned ...types.NamespacedName) *secretRefs {
	r := &secretRefs{by: map[objects.Key][]types.NamespacedName{}, count: map[types.NamespacedName]int{}, pinned: map[types.NamespacedName]bool{}}
	for _, nn := range pinned {
		r.pinned[nn] = true
	}
	return r
}

// set records what referrer references now (nil when it was deleted) and
// returns the Secrets that became, or stopped being, referenced.
func (r *secretRefs) set(referrer objects.Key, now []types.NamespacedName) []types.NamespacedName {
	var flipped []types.NamespacedName
	for _, nn := range r.by[referrer] {
		if r.count[nn]--; r.count[nn] == 0 {
			delete(r.count, nn)
			flipped = append(flipped, nn)
		}
	}
	for _, nn := range now {
		if r.count[nn]++; r.count[nn] == 1 {
			flipped = append(flipped, nn)
		}
	}
	if len(now) == 0 {
		delete(r.by, referrer)
	} else {
		r.by[referrer] = now
	}
	return flipped
}

func (r *secretRefs) referenced(nn types.NamespacedName) bool { return r.pinned[nn] || r.count[nn] > 0 }

// secretsOf lists the Secrets an object references: an HTTPProxy's TLS
// certificate and client CA, the CA of any of its services' upstream
// validation, an ExtensionService's upstream CA, and the Secrets a
// TLSCertificateDelegation shares. References are "name" in the object's
// namespace or "namespace/name".
func secretsOf(obj runtime.Object) []types.NamespacedName {
	var refs refList
	switch o := obj.(type) {
	case *switchyardv1.HTTPProxy:
		refs.ns = o.Namespace
		if vh := o.Spec.VirtualHost; vh != nil && vh.TLS != nil {
			refs.add(vh.TLS.SecretName)
			if cv := vh.TLS.ClientValidation; cv != nil {
				refs.add(cv.CACertificate)
			}
		}
		for _, r := range o.Spec.Routes {
			refs.services(r.Services)
		}
		if tp := o.Spec.TCPProxy; tp != nil {
			refs.services(tp.Services)
		}
	case *switchyardv1alpha1.ExtensionService:
		refs.ns = o.Namespace
		if uv := o.Spec.UpstreamValidation; uv != nil {
			refs.add(uv.CACertificate)
		}
	case *switchyardv1.TLSCertificateDelegation:
		refs.ns = o.Namespace
		for _, d := range o.Spec.Delegations {
			if d.SecretName != "" && !strings.Contains(d.SecretName, "/") {
				refs.add(d.SecretName)
			}
		}
	}
	return refs.list
}

type refList struct {
	ns   string
	list []types.NamespacedName
}

func (l *refList) add(ref string) {
	nn := types.NamespacedName{Namespace: l.ns, Name: ref}
	if ns, name, ok := strings.Cut(ref, "/"); ok {
		nn = types.NamespacedName{Namespace: ns, Name: name}
	}
	if nn.Namespace == "" || nn.Name == "" || strings.Contains(nn.Name, "/") || slices.Contains(l.list, nn) {
		return // the build reports a malformed reference
	}
	l.list = append(l.list, nn)
}

func (l *refList) services(svcs []switchyardv1.Service) {
	for _, s := range svcs {
		if s.UpstreamValidation != nil {
			l.add(s.UpstreamValidation.CACertificate)
		}
	}
}
