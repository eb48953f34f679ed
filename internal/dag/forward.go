package dag

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// clusterCommon is what every cluster of one route shares.
type clusterCommon struct {
	LoadBalancer string
	HealthCheck  *HealthCheck
	IdleTimeout  *time.Duration
	// ClientCertificate is the SDS name of the certificate presented to
	// the backends, "" for none.
	ClientCertificate string
}

// servicePlan is one route service after validation and resolution.
type servicePlan struct {
	backend         Backend
	protocol        string
	tls             *UpstreamTLS
	requestHeaders  *HeadersPolicy
	responseHeaders *HeadersPolicy
	hostRewrite     string
	cookies         []CookieRewrite
	circuit         *CircuitBreakers
	slowStart       *SlowStart
	mirror          bool
	percent         uint32
	// sni is the server name of an ExternalName backend (see ClusterSpec.SNI).
	sni string
}

// forwardBuilder turns a route's (or tcpproxy's) services into clusters.
type forwardBuilder struct {
	rb     *rootBuilder
	ns     string
	field  string
	st     *Status
	common clusterCommon
	// allowHeaders is false for tcpproxy, which has no HTTP headers.
	allowHeaders bool
	// validationField, when set, is where the services' shared validation
	// lives (an ExtensionService's spec.validation), for error messages.
	validationField string
	// extension is set for an ExtensionService, which cannot use an
	// ExternalName Service.
	extension bool
	// routeHeaders is the route's request policy, whose Host rewrite is
	// the SNI of its ExternalName backends unless a service sets its own.
	routeHeaders *switchyardv1.HeadersPolicy
}

// build returns the Forward for the services, or nil when no service can
// take traffic. ok is false when the spec itself is wrong, so the caller
// answers with an error instead of forwarding.
func (f *forwardBuilder) build(services []switchyardv1.Service) (fwd *Forward, ok bool) {
	if !f.checkWeights(services) {
		return nil, false
	}
	plans := make([]servicePlan, 0, len(services))
	specOK := true
	anyWeight := hasExplicitWeight(services)
	for i := range services {
		p, planOK, usable := f.plan(i, &services[i], anyWeight)
		specOK = specOK && planOK
		if usable {
			plans = append(plans, p)
		}
	}
	if !specOK {
		return nil, false
	}
	return f.assemble(plans)
}

func hasExplicitWeight(services []switchyardv1.Service) bool {
	for _, s := range services {
		if !s.Mirror && s.Weight != nil {
			return true
		}
	}
	return false
}

// checkWeights validates the weights and priorities of the non-mirror
// services as written, before any Service is looked up: levels must be
// contiguous from 0, each level must carry some weight, and a level's sum
// must fit Envoy's uint32.
func (f *forwardBuilder) checkWeights(services []switchyardv1.Service) bool {
	anyWeight := hasExplicitWeight(services)
	sums := map[int32]uint64{}
	type servicePort struct {
		name string
		port int32
	}
	levelOf := map[servicePort]int32{}
	nonMirror := 0
	for _, s := range services {
		if s.Mirror {
			continue
		}
		nonMirror++
		prio := int32(0)
		if s.Priority != nil {
			prio = *s.Priority
		}
		id := servicePort{s.Name, s.Port}
		if other, seen := levelOf[id]; seen && other != prio {
			f.st.addError(ErrService, "DuplicateService", "%s.services: Service %s port %d is listed at priorities %d and %d; list it once", f.field, s.Name, s.Port, other, prio)
			return false
		}
		levelOf[id] = prio
		w := int64(1)
		if anyWeight {
			w = 0
			if s.Weight != nil {
				w = *s.Weight
			}
		}
		if w < 0 || prio < 0 {
			f.st.addError(ErrService, "InvalidWeight", "%s.services: weights and priorities must not be negative", f.field)
			return false
		}
		sums[prio] += uint64(w)
	}
	if nonMirror == 0 {
		f.st.addError(ErrService, "NoServices", "%s.services: at least one service must not be a mirror", f.field)
		return false
	}
	for level := int32(0); level < int32(len(sums)); level++ {
		sum, ok := sums[level]
		switch {
		case !ok:
			f.st.addError(ErrService, "PriorityGap", "%s.services: priorities must be contiguous from 0, but priority %d is missing (used: %s)", f.field, level, priorityList(sums))
			return false
		case sum == 0:
			f.st.addError(ErrService, "ZeroWeights", "%s.services: the weights of priority %d sum to 0, so it can take no traffic", f.field, level)
			return false
		case sum > math.MaxUint32:
			f.st.addError(ErrService, "WeightOverflow", "%s.services: the weights of priority %d sum to %d, over the limit of %d", f.field, level, sum, uint32(math.MaxUint32))
			return false
		}
	}
	return true
}

func priorityList(sums map[int32]uint64) string {
	ps := make([]int, 0, len(sums))
	for p := range sums {
		ps = append(ps, int(p))
	}
	sort.Ints(ps)
	return strings.Trim(fmt.Sprint(ps), "[]")
}

// plan validates one service. planOK is false on a spec error; usable is
// false when the service cannot take traffic (spec or reference error, or
// weight 0).
func (f *forwardBuilder) plan(i int, s *switchyardv1.Service, anyWeight bool) (p servicePlan, planOK, usable bool) {
	field := f.field + ".services[" + strconv.Itoa(i) + "]"
	p.mirror = s.Mirror
	if !f.planSpec(field, s, &p) {
		return p, false, false
	}
	weight := uint32(1)
	if s.Mirror || anyWeight {
		weight = 0
		if s.Weight != nil {
			weight = uint32(*s.Weight) // checked by checkWeights / planSpec
		}
	}
	if s.Mirror {
		p.percent = weight
		weight = 1
	}
	p.backend.Weight = weight
	nn := types.NamespacedName{Namespace: f.ns, Name: s.Name}
	ref, rerr := resolveService(f.rb.snap, f.rb.deps, nn, s.Port)
	if rerr != nil {
		f.st.addError(ErrService, rerr.Reason, "%s: %s", field, rerr.Msg)
		return p, true, false
	}
	if ref.Service.Spec.Type == corev1.ServiceTypeExternalName && !f.planExternalName(field, ref, &p) {
		return p, true, false
	}
	if p.protocol == "" {
		p.protocol = cmp.Or(f.annotatedProtocol(field, ref), protocolFromAppProtocol(ref.Port))
	}
	p.circuit = f.annotatedCircuitBreakers(field, ref)
	if hp := s.HealthPort; hp != nil {
		if !hasTCPPort(ref.Service, *hp) {
			f.st.addError(ErrService, "HealthPortNotFound", "%s.healthPort: Service %s has no TCP port %d", field, nn, *hp)
			return p, true, false
		}
		p.backend.HealthPort = *hp
	}
	if objects.Drained(ref.Service.Annotations) {
		f.st.addWarning(ErrService, "ServiceDrained", "%s: Service %s is drained (%s): its endpoints take no new requests", field, nn, objects.DrainAnnotation)
	}
	if s.UpstreamValidation != nil {
		vfield := field + ".validation"
		if f.validationField != "" {
			vfield = f.validationField
		}
		if p.protocol != "tls" && p.protocol != "h2" {
			f.st.addError(ErrService, "ValidationWithoutTLS", "%s: requires protocol tls or h2, the service is reached in clear text", vfield)
			return p, false, false
		}
		ca, err := f.rb.secrets.caSecret(s.UpstreamValidation.CACertificate, f.ns)
		if err != nil {
			f.st.addError(ErrService, reasonOf(err), "%s.caSecret: %v", vfield, err)
			return p, true, false
		}
		f.rb.addSecret(ca)
		p.tls = &UpstreamTLS{CASecret: ca.Name, SubjectName: s.UpstreamValidation.SubjectName, SubjectNames: s.UpstreamValidation.SubjectNames}
	}
	return p, true, weight > 0
}

// planExternalName makes p an ExternalName backend, or reports why the
// Service cannot be one. Its SNI follows Contour: the Host the service's
// (else the route's) request policy rewrites to, else the external name,
// which is what a server reached by that name expects.
func (f *forwardBuilder) planExternalName(field string, ref *serviceRef, p *servicePlan) bool {
	name, rerr := externalNameBackend(ref.Service, f.rb.opts.ExternalNameServices, f.extension)
	if rerr != nil {
		f.st.addError(ErrService, rerr.Reason, "%s: %s", field, rerr.Msg)
		return false
	}
	p.backend.ExternalName = name
	p.sni = cmp.Or(p.hostRewrite, f.routeHostRewrite(), name)
	return true
}

// routeHostRewrite is the literal Host the route's request policy sets, ""
// for none; its errors are the route's to report.
func (f *forwardBuilder) routeHostRewrite() string {
	if f.routeHeaders == nil {
		return ""
	}
	_, host, err := parseHeadersPolicy(f.routeHeaders, headerScope{request: true, hostFromHeader: true, vars: headerVars{namespace: f.ns}})
	if err != nil {
		return ""
	}
	return host.literal
}

// planSpec checks the parts of a service that do not depend on other
// objects.
func (f *forwardBuilder) planSpec(field string, s *switchyardv1.Service, p *servicePlan) bool {
	ok := true
	if s.Port < 1 || s.Port > 65535 {
		f.st.addError(ErrService, "InvalidPort", "%s.port: %d is not a port number (1-65535)", field, s.Port)
		ok = false
	}
	if s.Name == "" {
		f.st.addError(ErrService, "InvalidName", "%s.name: must be set", field)
		ok = false
	}
	if s.Mirror && (s.Weight == nil || *s.Weight > 100) {
		f.st.addError(ErrService, "InvalidMirror", "%s.weight: a mirror must set weight to the percentage of requests to copy (0-100)", field)
		ok = false
	}
	if v := s.UpstreamValidation; v != nil {
		if err := validateSubjectName(v.SubjectName); err != nil {
			f.st.addError(ErrService, "InvalidValidation", "%s.validation.subjectName: %v", field, err)
			ok = false
		}
		if err := validateSubjectNames(v.SubjectName, v.SubjectNames); err != nil {
			f.st.addError(ErrService, "InvalidValidation", "%s.validation.subjectNames%v", field, err)
			ok = false
		}
	}
	if hp := s.HealthPort; hp != nil && (*hp < 1 || *hp > 65535) {
		f.st.addError(ErrService, "InvalidPort", "%s.healthPort: %d is not a port number (1-65535)", field, *hp)
		ok = false
	}
	var err error
	if p.slowStart, err = slowStart(s.SlowStartPolicy, f.common.LoadBalancer); err != nil {
		f.st.addError(ErrService, "InvalidSlowStartPolicy", "%s.slowStartPolicy%v", field, err)
		ok = false
	}
	if s.Mirror && s.Priority != nil {
		f.st.addError(ErrService, "InvalidMirror", "%s.priority: a mirror cannot have a priority", field)
		ok = false
	}
	p.backend.Service = types.NamespacedName{Namespace: f.ns, Name: s.Name}
	p.backend.Port = s.Port
	if s.Priority != nil && *s.Priority >= 0 {
		p.backend.Priority = uint32(*s.Priority)
	}
	if s.Protocol != nil {
		switch *s.Protocol {
		case "h2", "h2c", "tls":
			p.protocol = *s.Protocol
		default:
			f.st.addError(ErrService, "InvalidProtocol", "%s.protocol: %q is not one of h2, h2c, tls", field, *s.Protocol)
			ok = false
		}
	}
	return f.planHeaders(field, s, p) && ok
}

func (f *forwardBuilder) planHeaders(field string, s *switchyardv1.Service, p *servicePlan) bool {
	if !f.allowHeaders && (s.RequestHeadersPolicy != nil || s.ResponseHeadersPolicy != nil || len(s.CookieRewritePolicies) > 0) {
		f.st.addError(ErrTCPProxy, "HeadersOnTCP", "%s: header policies cannot be used on a tcpproxy", field)
		return false
	}
	ok := true
	var err error
	var host hostRewrite
	vars := headerVars{namespace: f.ns, service: s.Name, servicePort: strconv.Itoa(int(s.Port))}
	if p.requestHeaders, host, err = parseHeadersPolicy(s.RequestHeadersPolicy, headerScope{request: true, vars: vars}); err != nil {
		f.st.addError(ErrService, "InvalidHeadersPolicy", "%s.requestHeadersPolicy: %v", field, err)
		ok = false
	}
	p.hostRewrite = host.literal
	if p.cookies, err = parseCookieRewrites(s.CookieRewritePolicies); err != nil {
		f.st.addError(ErrService, "InvalidCookieRewrite", "%s.cookieRewritePolicies%v", field, err)
		ok = false
	}
	if p.responseHeaders, _, err = parseHeadersPolicy(s.ResponseHeadersPolicy, headerScope{vars: vars}); err != nil {
		f.st.addError(ErrService, "InvalidHeadersPolicy", "%s.responseHeadersPolicy: %v", field, err)
		ok = false
	}
	return ok
}

func reasonOf(err error) string {
	if re, ok := err.(*refError); ok {
		return re.Reason
	}
	return "Invalid"
}

// assemble makes the clusters for the usable services. Services merge into
// one cluster whose localities carry the weights, unless some service needs
// per-service route state (its own headers) or its own cluster settings
// (protocol, upstream TLS); then each gets a cluster and the route splits
// with weighted_clusters, which cannot express priorities.
func (f *forwardBuilder) assemble(plans []servicePlan) (*Forward, bool) {
	// Most routes have no mirror: their plans are the main ones as they
	// are, without a copy.
	isMirror := func(p servicePlan) bool { return p.mirror }
	main := plans
	if slices.ContainsFunc(plans, isMirror) {
		main = slices.DeleteFunc(slices.Clone(plans), isMirror)
	}
	fwd := &Forward{}
	for _, p := range plans {
		if p.mirror && p.percent > 0 {
			fwd.Mirrors = append(fwd.Mirrors, Mirror{Cluster: f.rb.cluster(f.spec([]servicePlan{p})), Percent: p.percent})
		}
	}
	if len(main) == 0 {
		return nil, true
	}
	if !mixesExternalName(main) {
		// A mixed backend set has no one cluster: its DNS name would have
		// to be a CNAME and addresses at once.
		fwd.Merged = f.rb.cluster(f.spec(main))
	}
	if !needsSplit(main) {
		fwd.Cluster = fwd.Merged
		return fwd, true
	}
	for _, p := range main {
		if p.backend.Priority > 0 {
			f.st.addError(ErrService, "PriorityWithSplit", "%s.services: priorities cannot be combined with per-service header policies, protocols, validation or ExternalName Services, which need a cluster per service", f.field)
			return nil, false
		}
	}
	for _, p := range main {
		one := p
		one.backend.Weight = 1
		fwd.Weighted = append(fwd.Weighted, WeightedCluster{
			Cluster:         f.rb.cluster(f.spec([]servicePlan{one})),
			Weight:          p.backend.Weight,
			RequestHeaders:  p.requestHeaders,
			ResponseHeaders: p.responseHeaders,
			HostRewrite:     p.hostRewrite,
			CookieRewrites:  p.cookies,
		})
	}
	return fwd, true
}

// mixesExternalName reports whether the plans are more than one backend
// and some is an ExternalName Service, which needs a cluster of its own.
func mixesExternalName(plans []servicePlan) bool {
	if len(plans) < 2 {
		return false
	}
	for _, p := range plans {
		if p.backend.ExternalName != "" {
			return true
		}
	}
	return false
}

func needsSplit(plans []servicePlan) bool {
	if mixesExternalName(plans) {
		return true
	}
	first := plans[0]
	for _, p := range plans {
		if p.requestHeaders != nil || p.responseHeaders != nil || p.hostRewrite != "" || len(p.cookies) > 0 {
			return true
		}
		if p.protocol != first.protocol || !equalTLS(p.tls, first.tls) || !sameCircuitBreakers(p.circuit, first.circuit) || !sameSlowStart(p.slowStart, first.slowStart) {
			return true
		}
	}
	return false
}

func equalTLS(a, b *UpstreamTLS) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.CASecret == b.CASecret && a.SubjectName == b.SubjectName && slices.Equal(a.SubjectNames, b.SubjectNames)
}

// spec builds the cluster spec of a set of services that share protocol
// and TLS settings (the first plan's are used).
func (f *forwardBuilder) spec(plans []servicePlan) ClusterSpec {
	backends := make([]Backend, 0, len(plans))
	for _, p := range plans {
		backends = append(backends, p.backend)
	}
	sortBackends(backends)
	backends = mergeDuplicateBackends(backends)
	return ClusterSpec{
		Backends:              backends,
		Protocol:              plans[0].protocol,
		UpstreamTLS:           plans[0].tls,
		CircuitBreakers:       plans[0].circuit,
		SlowStart:             plans[0].slowStart,
		LoadBalancer:          f.common.LoadBalancer,
		HealthCheck:           f.common.HealthCheck,
		IdleConnectionTimeout: f.common.IdleTimeout,
		ClientCertificate:     f.common.ClientCertificate,
		SNI:                   plans[0].sni,
	}
}

// mergeDuplicateBackends folds the same Service port listed twice at one
// priority into one backend with the summed weight, so the CLA never holds
// the same endpoint twice in one priority.
func mergeDuplicateBackends(bs []Backend) []Backend {
	out := bs[:0]
	for _, b := range bs {
		if n := len(out); n > 0 && out[n-1].Service == b.Service && out[n-1].Port == b.Port && out[n-1].Priority == b.Priority {
			out[n-1].Weight += b.Weight
			continue
		}
		out = append(out, b)
	}
	return out
}
