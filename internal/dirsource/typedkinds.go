package dirsource

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	switchyardv1 "github.com/switchyard-dev/switchyard/apis/switchyard/v1"
)

// The fields decodeTyped reads, kind by kind: those that Services,
// EndpointSlices and HTTPProxies written by people, by kubectl and by
// `switchyard gen` set. Any other key declines the document (see
// typedfast.go).

// list reads an array of objects, each with member; an empty array is an
// empty slice, as the strict decoder makes it.
func list[T any](r *jsonReader, member func(k string, v *T)) []T {
	out := make([]T, 0, r.elements())
	r.array(func() {
		var zero T
		out = append(out, zero)
		v := &out[len(out)-1]
		r.object(func(k string) { member(k, v) })
	})
	return out
}

// none reads an object that must be empty.
func (r *jsonReader) none(string) { r.fail() }

func (r *jsonReader) service(k string, s *corev1.Service) {
	switch {
	case r.typeMeta(k, &s.TypeMeta):
	case k == "metadata":
		r.objectMeta(&s.ObjectMeta)
	case k == "spec":
		r.object(func(k string) { r.serviceSpec(k, &s.Spec) })
	case k == "status":
		r.object(func(k string) {
			if k != "loadBalancer" {
				r.fail()
				return
			}
			r.object(r.none)
		})
	default:
		r.fail()
	}
}

func (r *jsonReader) serviceSpec(k string, s *corev1.ServiceSpec) {
	switch k {
	case "ports":
		s.Ports = list(r, r.servicePort)
	case "selector":
		r.stringMap(&s.Selector)
	case "type":
		s.Type = corev1.ServiceType(r.shared())
	case "clusterIP":
		s.ClusterIP = r.str()
	case "externalName":
		s.ExternalName = r.str()
	default:
		r.fail()
	}
}

func (r *jsonReader) servicePort(k string, p *corev1.ServicePort) {
	switch k {
	case "name":
		p.Name = r.shared()
	case "protocol":
		p.Protocol = corev1.Protocol(r.shared())
	case "appProtocol":
		p.AppProtocol = r.strPtr()
	case "port":
		p.Port = r.int32()
	case "nodePort":
		p.NodePort = r.int32()
	case "targetPort":
		p.TargetPort = r.intOrString()
	default:
		r.fail()
	}
}

// intOrString reads what IntOrString.UnmarshalJSON reads: a string, or
// else an int32.
func (r *jsonReader) intOrString() intstr.IntOrString {
	if r.p < len(r.b) && r.b[r.p] == '"' {
		return intstr.IntOrString{Type: intstr.String, StrVal: r.shared()}
	}
	return intstr.IntOrString{Type: intstr.Int, IntVal: r.int32()}
}

func (r *jsonReader) endpointSlice(k string, s *discoveryv1.EndpointSlice) {
	switch {
	case r.typeMeta(k, &s.TypeMeta):
	case k == "metadata":
		r.objectMeta(&s.ObjectMeta)
	case k == "addressType":
		s.AddressType = discoveryv1.AddressType(r.shared())
	case k == "endpoints":
		s.Endpoints = list(r, r.endpoint)
	case k == "ports":
		s.Ports = list(r, r.endpointPort)
	default:
		r.fail()
	}
}

func (r *jsonReader) endpoint(k string, e *discoveryv1.Endpoint) {
	switch k {
	case "addresses":
		e.Addresses = r.stringList()
	case "conditions":
		r.object(func(k string) { r.conditions(k, &e.Conditions) })
	case "zone":
		e.Zone = r.sharedPtr()
	case "nodeName":
		e.NodeName = r.sharedPtr()
	case "hostname":
		e.Hostname = r.strPtr()
	default:
		r.fail()
	}
}

func (r *jsonReader) conditions(k string, c *discoveryv1.EndpointConditions) {
	switch k {
	case "ready":
		c.Ready = r.sharedBool()
	case "serving":
		c.Serving = r.sharedBool()
	case "terminating":
		c.Terminating = r.sharedBool()
	default:
		r.fail()
	}
}

func (r *jsonReader) endpointPort(k string, p *discoveryv1.EndpointPort) {
	switch k {
	case "name":
		p.Name = r.sharedPtr()
	case "protocol":
		p.Protocol = r.sharedProtocol()
	case "port":
		p.Port = r.sharedPort()
	case "appProtocol":
		p.AppProtocol = r.strPtr()
	default:
		r.fail()
	}
}

func (r *jsonReader) httpProxy(k string, p *switchyardv1.HTTPProxy) {
	switch {
	case r.typeMeta(k, &p.TypeMeta):
	case k == "metadata":
		r.objectMeta(&p.ObjectMeta)
	case k == "spec":
		r.object(func(k string) { r.proxySpec(k, &p.Spec) })
	case k == "status":
		r.object(func(k string) { r.proxyStatus(k, &p.Status) })
	default:
		r.fail()
	}
}

func (r *jsonReader) proxySpec(k string, s *switchyardv1.HTTPProxySpec) {
	switch k {
	case "ingressClassName":
		s.IngressClassName = r.str()
	case "virtualhost":
		s.VirtualHost = &switchyardv1.VirtualHost{}
		r.object(func(k string) { r.virtualHost(k, s.VirtualHost) })
	case "routes":
		s.Routes = list(r, r.route)
	case "includes":
		s.Includes = list(r, r.include)
	default:
		r.fail()
	}
}

func (r *jsonReader) proxyStatus(k string, s *switchyardv1.HTTPProxyStatus) {
	switch k {
	case "currentStatus":
		s.CurrentStatus = r.str()
	case "description":
		s.Description = r.str()
	default:
		r.fail()
	}
}

func (r *jsonReader) virtualHost(k string, v *switchyardv1.VirtualHost) {
	switch k {
	case "fqdn":
		v.Fqdn = r.str()
	case "tls":
		v.TLS = &switchyardv1.TLS{}
		r.object(func(k string) { r.tls(k, v.TLS) })
	case "authorization":
		v.Authorization = &switchyardv1.AuthorizationServer{}
		r.object(func(k string) { r.authorization(k, v.Authorization) })
	case "jwtProviders":
		v.JWTProviders = list(r, r.jwtProvider)
	default:
		r.fail()
	}
}

func (r *jsonReader) tls(k string, t *switchyardv1.TLS) {
	switch k {
	case "secretName":
		t.SecretName = r.shared()
	case "minimumProtocolVersion":
		t.MinimumProtocolVersion = r.str()
	case "maximumProtocolVersion":
		t.MaximumProtocolVersion = r.str()
	case "passthrough":
		t.Passthrough = r.bool()
	case "enableFallbackCertificate":
		t.EnableFallbackCertificate = r.bool()
	default:
		r.fail()
	}
}

func (r *jsonReader) route(k string, rt *switchyardv1.Route) {
	switch k {
	case "name":
		rt.Name = r.str()
	case "conditions":
		rt.Conditions = list(r, r.matchCondition)
	case "services":
		rt.Services = list(r, r.proxyService)
	case "enableWebsockets":
		rt.EnableWebsockets = r.bool()
	case "permitInsecure":
		rt.PermitInsecure = r.bool()
	case "timeoutPolicy":
		rt.TimeoutPolicy = &switchyardv1.TimeoutPolicy{}
		r.object(func(k string) { r.timeoutPolicy(k, rt.TimeoutPolicy) })
	case "authPolicy":
		rt.AuthPolicy = r.authPolicy()
	default:
		r.fail()
	}
}

func (r *jsonReader) matchCondition(k string, c *switchyardv1.MatchCondition) {
	switch k {
	case "prefix":
		c.Prefix = r.shared()
	case "exact":
		c.Exact = r.str()
	case "regex":
		c.Regex = r.str()
	default:
		r.fail()
	}
}

func (r *jsonReader) proxyService(k string, s *switchyardv1.Service) {
	switch k {
	case "name":
		s.Name = r.str()
	case "port":
		s.Port = r.int32()
	case "weight":
		s.Weight = r.int64Ptr()
	case "priority":
		s.Priority = r.int32Ptr()
	case "protocol":
		s.Protocol = r.strPtr()
	case "mirror":
		s.Mirror = r.bool()
	default:
		r.fail()
	}
}

func (r *jsonReader) timeoutPolicy(k string, t *switchyardv1.TimeoutPolicy) {
	switch k {
	case "response":
		t.Response = r.shared()
	case "idle":
		t.Idle = r.str()
	case "idleConnection":
		t.IdleConnection = r.str()
	default:
		r.fail()
	}
}

func (r *jsonReader) include(k string, in *switchyardv1.Include) {
	switch k {
	case "name":
		in.Name = r.str()
	case "namespace":
		in.Namespace = r.str()
	case "conditions":
		in.Conditions = list(r, r.matchCondition)
	default:
		r.fail()
	}
}

func (r *jsonReader) authorization(k string, a *switchyardv1.AuthorizationServer) {
	switch k {
	case "extensionRef":
		a.ExtensionServiceRef = &switchyardv1.ExtensionServiceReference{}
		r.object(func(k string) { r.extensionRef(k, a.ExtensionServiceRef) })
	case "responseTimeout":
		a.ResponseTimeout = r.str()
	case "failOpen":
		a.FailOpen = r.bool()
	case "authPolicy":
		a.AuthPolicy = r.authPolicy()
	default:
		r.fail()
	}
}

func (r *jsonReader) extensionRef(k string, e *switchyardv1.ExtensionServiceReference) {
	switch k {
	case "apiVersion":
		e.APIVersion = r.str()
	case "namespace":
		e.Namespace = r.str()
	case "name":
		e.Name = r.str()
	default:
		r.fail()
	}
}

func (r *jsonReader) authPolicy() *switchyardv1.AuthorizationPolicy {
	p := &switchyardv1.AuthorizationPolicy{}
	r.object(func(k string) {
		switch k {
		case "disabled":
			p.Disabled = r.bool()
		case "context":
			r.stringMap(&p.Context)
		default:
			r.fail()
		}
	})
	return p
}

func (r *jsonReader) jwtProvider(k string, p *switchyardv1.JWTProvider) {
	switch k {
	case "name":
		p.Name = r.str()
	case "default":
		p.Default = r.bool()
	case "issuer":
		p.Issuer = r.str()
	case "audiences":
		p.Audiences = r.stringList()
	case "forwardJWT":
		p.ForwardJWT = r.bool()
	case "remoteJWKS":
		r.object(func(k string) { r.remoteJWKS(k, &p.RemoteJWKS) })
	default:
		r.fail()
	}
}

func (r *jsonReader) remoteJWKS(k string, j *switchyardv1.RemoteJWKS) {
	switch k {
	case "uri":
		j.URI = r.str()
	case "timeout":
		j.Timeout = r.str()
	case "cacheDuration":
		j.CacheDuration = r.str()
	case "dnsLookupFamily":
		j.DNSLookupFamily = r.str()
	default:
		r.fail()
	}
}
