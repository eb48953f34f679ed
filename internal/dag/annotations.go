package dag

import (
	"strconv"
	"strings"

	"github.com/switchyard-dev/switchyard/internal/objects"
)

// The Service annotations Switchyard reads, Contour's under switchyard.dev/.
// Contour's own names (projectcontour.io/...) are read too, so that
// Services keep working during a migration, with a warning to rename them.
const (
	annotationPrefix        = "switchyard.dev/"
	contourAnnotationPrefix = "projectcontour.io/"
)

// upstreamProtocols are the upstream-protocol.<protocol> annotations: each
// lists the Service ports (numbers or names) reached with that protocol.
var upstreamProtocols = []string{"h2", "h2c", "tls"}

// annotation returns the value of switchyard.dev/<name>, or of Contour's
// projectcontour.io/<name> (and that key, for the rename warning).
func annotation(svc *objects.Service, name string) (value, contourKey string, ok bool) {
	if len(svc.Annotations) == 0 {
		// Most Services have none: skip building the keys.
		return "", "", false
	}
	if v, ok := svc.Annotations[annotationPrefix+name]; ok {
		return v, "", true
	}
	if v, ok := svc.Annotations[contourAnnotationPrefix+name]; ok {
		return v, contourAnnotationPrefix + name, true
	}
	return "", "", false
}

// annotatedProtocol returns the protocol the Service's upstream-protocol
// annotations give port, or "".
func (f *forwardBuilder) annotatedProtocol(field string, ref *serviceRef) string {
	if len(ref.Service.Annotations) == 0 {
		return ""
	}
	for _, proto := range upstreamProtocols {
		v, contourKey, ok := annotation(ref.Service, "upstream-protocol."+proto)
		if !ok {
			continue
		}
		f.renameWarning(field, ref, contourKey)
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if p == strconv.Itoa(int(ref.Port.Port)) || (p != "" && p == ref.Port.Name) {
				return proto
			}
		}
	}
	return ""
}

// annotatedCircuitBreakers returns the limits of the Service's
// max-connections, max-pending-requests, max-requests, max-retries and
// per-host-max-connections annotations, or nil when it has none. A value
// that is not a number is ignored, with a warning naming it.
func (f *forwardBuilder) annotatedCircuitBreakers(field string, ref *serviceRef) *CircuitBreakers {
	if len(ref.Service.Annotations) == 0 {
		// Every route of every proxy asks: skip the table below, which
		// escapes to the heap.
		return nil
	}
	var cb CircuitBreakers
	set := false
	for _, a := range []struct {
		name string
		dst  *uint32
	}{
		{"max-connections", &cb.MaxConnections},
		{"max-pending-requests", &cb.MaxPendingRequests},
		{"max-requests", &cb.MaxRequests},
		{"max-retries", &cb.MaxRetries},
		{"per-host-max-connections", &cb.PerHostMaxConnections},
	} {
		v, contourKey, ok := annotation(ref.Service, a.name)
		if !ok {
			continue
		}
		f.renameWarning(field, ref, contourKey)
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
		if err != nil {
			f.st.addWarning(ErrService, "InvalidAnnotation", "%s: Service %s/%s: annotation %s: %q is not a number from 0 to 4294967295; ignored", field, ref.Service.Namespace, ref.Service.Name, a.name, v)
			continue
		}
		*a.dst = uint32(n)
		set = true
		if a.name == "max-retries" {
			cb.MaxRetriesSet = true
		}
	}
	if !set {
		return nil
	}
	return &cb
}

func (f *forwardBuilder) renameWarning(field string, ref *serviceRef, contourKey string) {
	if contourKey == "" {
		return
	}
	name := strings.TrimPrefix(contourKey, contourAnnotationPrefix)
	msg := "%s: Service %s/%s: annotation %s is read for migration; rename it %s"
	for _, w := range f.st.Warnings {
		if w.Reason == "ContourAnnotation" && strings.Contains(w.Message, " "+contourKey+" ") && strings.Contains(w.Message, ref.Service.Name) {
			return
		}
	}
	f.st.addWarning(ErrService, "ContourAnnotation", msg, field, ref.Service.Namespace, ref.Service.Name, contourKey, annotationPrefix+name)
}

// sameCircuitBreakers reports whether two services' limits can share a
// cluster.
func sameCircuitBreakers(a, b *CircuitBreakers) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
