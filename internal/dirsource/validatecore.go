package dirsource

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateObject checks what a kube-apiserver checks when the object is
// created, beyond its name and namespace (validateKey): labels and
// annotations for every kind, and the fields of the core kinds, whose
// schemas are compiled into the API server rather than published as CRDs.
// Without it a directory would serve what a cluster refuses, such as an
// EndpointSlice address 10.0.0.999 or a port 70000.
//
// Two differences are deliberate. Fields the API server defaults (a port's
// protocol, a Service's type) may be left out. Loopback and link-local
// endpoint addresses, which the API server refuses, are accepted: serving a
// directory on one machine, with backends on 127.0.0.1, is what the
// directory source is for.
//
// It returns the problems as one message, each naming its field, sorted so
// that the message is the same from run to run; "" if there are none.
func validateObject(obj runtime.Object) string {
	var errs field.ErrorList
	if m, err := meta.Accessor(obj); err == nil {
		errs = append(errs, validateLabels(m.GetLabels(), "metadata", "labels")...)
		if a := m.GetAnnotations(); len(a) > 0 { // none has no problem, and needs no path
			errs = append(errs, apivalidation.ValidateAnnotations(a, field.NewPath("metadata", "annotations"))...)
		}
	}
	switch o := obj.(type) {
	case *corev1.Service:
		errs = append(errs, validateService(o)...)
	case *corev1.Secret:
		errs = append(errs, validateSecret(o)...)
	case *discoveryv1.EndpointSlice:
		errs = append(errs, validateEndpointSlice(o)...)
	case *corev1.Node:
		errs = append(errs, validateNode(o)...)
	}
	if len(errs) == 0 {
		return ""
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	slices.Sort(msgs)
	return strings.Join(slices.Compact(msgs), "; ")
}

var (
	protocols    = []string{string(corev1.ProtocolSCTP), string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}
	serviceTypes = []string{
		string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeExternalName),
		string(corev1.ServiceTypeLoadBalancer), string(corev1.ServiceTypeNodePort),
	}
	addressTypes = []string{
		string(discoveryv1.AddressTypeFQDN), string(discoveryv1.AddressTypeIPv4), string(discoveryv1.AddressTypeIPv6),
	}
)

func validateService(s *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	switch t := s.Spec.Type; {
	case t == "":
	case !slices.Contains(serviceTypes, string(t)):
		errs = append(errs, field.NotSupported(field.NewPath("spec", "type"), t, serviceTypes))
	}
	if s.Spec.Type == corev1.ServiceTypeExternalName {
		// A CNAME may end in a dot to say it is fully qualified.
		name := strings.TrimSuffix(s.Spec.ExternalName, ".")
		if name == "" {
			errs = append(errs, field.Required(field.NewPath("spec", "externalName"), "a Service of type ExternalName needs one"))
		} else {
			errs = append(errs, invalid(field.NewPath("spec", "externalName"), s.Spec.ExternalName, validation.IsDNS1123Subdomain(name))...)
		}
	} else if len(s.Spec.Ports) == 0 && s.Spec.ClusterIP != corev1.ClusterIPNone {
		errs = append(errs, field.Required(field.NewPath("spec", "ports"), "only a headless (clusterIP: None) or ExternalName Service may have none"))
	}
	if ip := s.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone {
		errs = append(errs, validation.IsValidIP(field.NewPath("spec", "clusterIP"), ip)...)
	}
	names := map[string]bool{}
	type portProto struct {
		port  int32
		proto corev1.Protocol
	}
	ports := map[portProto]bool{}
	for i, p := range s.Spec.Ports {
		// Paths are made only for a problem: a directory has many Services.
		port := func() *field.Path { return field.NewPath("spec", "ports").Index(i) }
		path := func(name string) *field.Path { return port().Child(name) }
		pp := portProto{p.Port, cmp.Or(p.Protocol, corev1.ProtocolTCP)}
		if ports[pp] {
			errs = append(errs, field.Duplicate(port(), fmt.Sprintf("%d/%s", pp.port, pp.proto)))
		}
		ports[pp] = true
		switch {
		case p.Name == "" && len(s.Spec.Ports) > 1:
			errs = append(errs, field.Required(path("name"), "every port of a Service with several ports needs a name"))
		case p.Name != "":
			if msgs := isDNS1123Label(p.Name); msgs != nil {
				errs = append(errs, invalid(path("name"), p.Name, msgs)...)
			}
		}
		if names[p.Name] && p.Name != "" {
			errs = append(errs, field.Duplicate(path("name"), p.Name))
		}
		names[p.Name] = true
		errs = append(errs, validateProtocol(path, p.Protocol)...)
		errs = append(errs, validatePort(path, "port", p.Port)...)
		errs = append(errs, validateTargetPort(path, p.TargetPort)...)
		if p.NodePort != 0 {
			errs = append(errs, validatePort(path, "nodePort", p.NodePort)...)
		}
		errs = append(errs, validateAppProtocol(path, p.AppProtocol)...)
	}
	errs = append(errs, validateLabels(s.Spec.Selector, "spec", "selector")...)
	return errs
}

// childPath makes the path of a field of the element being checked, only
// once a problem is found.
type childPath func(name string) *field.Path

// validatePort checks a port number, the field named name.
func validatePort(path childPath, name string, port int32) field.ErrorList {
	if msgs := validation.IsValidPortNum(int(port)); msgs != nil {
		return invalid(path(name), port, msgs)
	}
	return nil
}

// validateTargetPort accepts 0 (the API server defaults it to the port), a
// port number or a port name.
func validateTargetPort(path childPath, tp intstr.IntOrString) field.ErrorList {
	if tp.Type == intstr.String {
		if msgs := validation.IsValidPortName(tp.StrVal); msgs != nil {
			return invalid(path("targetPort"), tp.StrVal, msgs)
		}
		return nil
	}
	if tp.IntVal == 0 {
		return nil
	}
	return validatePort(path, "targetPort", tp.IntVal)
}

// validateProtocol accepts an empty protocol, which the API server defaults
// to TCP.
func validateProtocol(path childPath, p corev1.Protocol) field.ErrorList {
	if p == "" || slices.Contains(protocols, string(p)) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path("protocol"), p, protocols)}
}

func validateAppProtocol(path childPath, p *string) field.ErrorList {
	if p == nil {
		return nil
	}
	if msgs := isLabelKey(*p); msgs != nil {
		return invalid(path("appProtocol"), *p, msgs)
	}
	return nil
}

func validateEndpointSlice(s *discoveryv1.EndpointSlice) field.ErrorList {
	var errs field.ErrorList
	switch at := string(s.AddressType); {
	case at == "":
		errs = append(errs, field.Required(field.NewPath("addressType"), "one of "+strings.Join(addressTypes, ", ")))
	case !slices.Contains(addressTypes, at):
		errs = append(errs, field.NotSupported(field.NewPath("addressType"), at, addressTypes))
	}
	for i, ep := range s.Endpoints {
		// Paths are made only for a problem: a slice has many endpoints,
		// and a directory many slices.
		path := func(name string) *field.Path { return field.NewPath("endpoints").Index(i).Child(name) }
		if len(ep.Addresses) == 0 {
			errs = append(errs, field.Required(path("addresses"), "must contain at least 1 address"))
		}
		for j, a := range ep.Addresses {
			if validateAddress(nil, s.AddressType, a) != nil {
				errs = append(errs, validateAddress(path("addresses").Index(j), s.AddressType, a)...)
			}
		}
		if ep.Hostname != nil {
			if msgs := isDNS1123Label(*ep.Hostname); msgs != nil {
				errs = append(errs, invalid(path("hostname"), *ep.Hostname, msgs)...)
			}
		}
		if ep.NodeName != nil {
			if msgs := isDNS1123Subdomain(*ep.NodeName); msgs != nil {
				errs = append(errs, invalid(path("nodeName"), *ep.NodeName, msgs)...)
			}
		}
		if ep.Zone != nil {
			if msgs := isLabelValue(*ep.Zone); msgs != nil {
				errs = append(errs, invalid(path("zone"), *ep.Zone, msgs)...)
			}
		}
	}
	names := map[string]bool{}
	for i, p := range s.Ports {
		path := func(name string) *field.Path { return field.NewPath("ports").Index(i).Child(name) }
		name := ""
		if p.Name != nil {
			name = *p.Name
		}
		if name != "" {
			if msgs := isDNS1123Label(name); msgs != nil {
				errs = append(errs, invalid(path("name"), name, msgs)...)
			}
		}
		if names[name] {
			errs = append(errs, field.Duplicate(path("name"), name))
		}
		names[name] = true
		if p.Protocol != nil {
			errs = append(errs, validateProtocol(path, *p.Protocol)...)
		}
		// A nil port means "all ports"; a number must be one.
		if p.Port != nil {
			errs = append(errs, validatePort(path, "port", *p.Port)...)
		}
		errs = append(errs, validateAppProtocol(path, p.AppProtocol)...)
	}
	return errs
}

// validateAddress checks an endpoint address against the slice's
// addressType: an IP address of that family, or a fully qualified domain
// name.
func validateAddress(path *field.Path, at discoveryv1.AddressType, a string) field.ErrorList {
	switch at {
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(path, a)
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		if at == discoveryv1.AddressTypeIPv4 && canonicalIPv4(a) {
			return nil
		}
		if errs := validation.IsValidIP(path, a); len(errs) > 0 {
			return errs
		}
		ip, err := netip.ParseAddr(a)
		if err != nil {
			return field.ErrorList{field.Invalid(path, a, err.Error())}
		}
		if ip.Is4() != (at == discoveryv1.AddressTypeIPv4) {
			return field.ErrorList{field.Invalid(path, a, "must be an "+string(at)+" address, as addressType says")}
		}
	}
	// An unknown addressType is reported once, on the field itself.
	return nil
}

// secretKeys are the keys each built-in Secret type must have; a type not
// listed (Opaque, or one of the user's own) requires none.
var secretKeys = map[corev1.SecretType][]string{
	corev1.SecretTypeTLS:              {corev1.TLSCertKey, corev1.TLSPrivateKeyKey},
	corev1.SecretTypeSSHAuth:          {corev1.SSHAuthPrivateKey},
	corev1.SecretTypeDockercfg:        {corev1.DockerConfigKey},
	corev1.SecretTypeDockerConfigJson: {corev1.DockerConfigJsonKey},
}

func validateSecret(s *corev1.Secret) field.ErrorList {
	var errs field.ErrorList
	data := field.NewPath("data")
	size := 0
	for _, k := range slices.Sorted(maps.Keys(s.Data)) {
		errs = append(errs, invalid(data.Key(k), k, validation.IsConfigMapKey(k))...)
		size += len(s.Data[k])
	}
	if size > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(data, "", corev1.MaxSecretSize))
	}
	for _, k := range secretKeys[s.Type] {
		if _, ok := s.Data[k]; !ok {
			errs = append(errs, field.Required(data.Key(k), fmt.Sprintf("a Secret of type %s needs it", s.Type)))
		}
	}
	switch s.Type {
	case corev1.SecretTypeBasicAuth:
		_, user := s.Data[corev1.BasicAuthUsernameKey]
		_, pass := s.Data[corev1.BasicAuthPasswordKey]
		if !user && !pass {
			errs = append(errs, field.Required(data, fmt.Sprintf("a Secret of type %s needs %s or %s",
				s.Type, corev1.BasicAuthUsernameKey, corev1.BasicAuthPasswordKey)))
		}
	case corev1.SecretTypeServiceAccountToken:
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(corev1.ServiceAccountNameKey),
				fmt.Sprintf("a Secret of type %s needs it", s.Type)))
		}
	case corev1.SecretTypeDockercfg, corev1.SecretTypeDockerConfigJson:
		for _, k := range secretKeys[s.Type] {
			if v, ok := s.Data[k]; ok && !json.Valid(v) {
				errs = append(errs, field.Invalid(data.Key(k), "<secret contents redacted>", "must be valid JSON"))
			}
		}
	}
	return errs
}

func validateNode(n *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	cidrs := field.NewPath("spec", "podCIDRs")
	if n.Spec.PodCIDR != "" {
		errs = append(errs, validation.IsValidCIDR(field.NewPath("spec", "podCIDR"), n.Spec.PodCIDR)...)
	}
	for i, c := range n.Spec.PodCIDRs {
		errs = append(errs, validation.IsValidCIDR(cidrs.Index(i), c)...)
	}
	return errs
}

// invalid turns the messages of one of apimachinery's Is* checks into
// field errors.
func invalid(path *field.Path, value any, msgs []string) field.ErrorList {
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(path, value, m))
	}
	return errs
}
