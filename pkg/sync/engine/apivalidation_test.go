package engine

// What a kube-apiserver would refuse, for the objects the engine plans. k8s.io/kubernetes is not
// importable as a module, so this mirrors, for the fields the engine sets, the rules of
// k8s.io/kubernetes v1.36.3 (the test bed's version):
//   - pkg/apis/core/v1/defaults.go SetDefaults_Service and pkg/apis/discovery/v1/defaults.go
//     SetDefaults_EndpointPort, applied first, as the apiserver defaults before it validates;
//   - pkg/apis/core/validation/validation.go ValidateServiceCreate: ValidateObjectMeta
//     (apimachinery's: name, namespace, labels, annotations, owner references) with
//     NameIsDNS1035Label, validateService (ports required unless headless; (protocol, port)
//     unique; sessionAffinity and its config; type; nodePort 0 for ClusterIP; internal traffic
//     policy; trafficDistribution; externalTrafficPolicy only when externally accessible),
//     validateServicePort (name required when there is more than one port, a DNS-1123 label,
//     unique; port 1-65535; protocol TCP, UDP or SCTP; targetPort a port number or IANA service
//     name; appProtocol a qualified name) and the ipFamilies/ipFamilyPolicy part of
//     ValidateServiceClusterIPsRelatedFields;
//   - pkg/apis/discovery/validation/validation.go ValidateEndpointSlice: ValidateObjectMeta with
//     NameIsDNSSubdomain, validateAddressType, validatePorts (names "" or a DNS-1123 label,
//     unique; protocol set and supported; appProtocol a qualified name) and validateEndpoints
//     (at most 1000, 1-100 addresses of the slice's type each, hostname a DNS-1123 label, at most
//     8 zone hints, each a label value, once); at most 100 ports, the maxItems of the v1 type (k8s.io/api discovery/v1
//     types.go, declarative validation in pkg/apis/discovery/v1/zz_generated.validations.go; the
//     handwritten maxPorts is 20000).
// Port names are DNS-1123 labels of up to 63 characters for Services and slices (validateServicePort,
// validatePorts); the 15-character IANA_SVC_NAME rule is a container port's and a targetPort's.

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	supportedProtocols = map[corev1.Protocol]bool{corev1.ProtocolTCP: true, corev1.ProtocolUDP: true, corev1.ProtocolSCTP: true}
	supportedAddrTypes = map[discoveryv1.AddressType]bool{discoveryv1.AddressTypeIPv4: true, discoveryv1.AddressTypeIPv6: true, discoveryv1.AddressTypeFQDN: true}
)

const (
	maxClientIPAffinitySeconds = 86400 // core.MaxClientIPServiceAffinitySeconds
	maxSlicePorts              = 100
	maxSliceEndpoints          = 1000
	maxEndpointAddresses       = 100
	maxZoneHints               = 8
)

// defaultedService is s as the apiserver holds it before validation (SetDefaults_Service).
func defaultedService(in *corev1.Service) *corev1.Service {
	s := in.DeepCopy()
	if s.Spec.SessionAffinity == "" {
		s.Spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if s.Spec.SessionAffinity == corev1.ServiceAffinityNone {
		s.Spec.SessionAffinityConfig = nil
	}
	if s.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		if c := s.Spec.SessionAffinityConfig; c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(corev1.DefaultClientIPServiceAffinitySeconds))}}
		}
	}
	if s.Spec.Type == "" {
		s.Spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range s.Spec.Ports {
		p := &s.Spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if s.Spec.InternalTrafficPolicy == nil && s.Spec.Type != corev1.ServiceTypeExternalName {
		s.Spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyCluster)
	}
	return s
}

// validateService lists what the apiserver would refuse in a create of in.
func validateService(in *corev1.Service) field.ErrorList {
	s := defaultedService(in)
	errs := apimachineryvalidation.ValidateObjectMeta(&s.ObjectMeta, true, apimachineryvalidation.NameIsDNS1035Label, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	headless := s.Spec.ClusterIP == corev1.ClusterIPNone
	if len(s.Spec.Ports) == 0 && !headless && s.Spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(spec.Child("ports"), ""))
	}
	names := map[string]bool{}
	pps := map[string]bool{}
	for i, p := range s.Spec.Ports {
		pp := spec.Child("ports").Index(i)
		switch {
		case len(s.Spec.Ports) > 1 && p.Name == "":
			errs = append(errs, field.Required(pp.Child("name"), ""))
		case p.Name != "":
			for _, msg := range validation.IsDNS1123Label(p.Name) {
				errs = append(errs, field.Invalid(pp.Child("name"), p.Name, msg))
			}
			if names[p.Name] {
				errs = append(errs, field.Duplicate(pp.Child("name"), p.Name))
			}
			names[p.Name] = true
		}
		for _, msg := range validation.IsValidPortNum(int(p.Port)) {
			errs = append(errs, field.Invalid(pp.Child("port"), p.Port, msg))
		}
		if !supportedProtocols[p.Protocol] {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), p.Protocol, []string{"SCTP", "TCP", "UDP"}))
		}
		if p.TargetPort.Type == intstr.String {
			for _, msg := range validation.IsValidPortName(p.TargetPort.StrVal) {
				errs = append(errs, field.Invalid(pp.Child("targetPort"), p.TargetPort, msg))
			}
		} else {
			for _, msg := range validation.IsValidPortNum(p.TargetPort.IntValue()) {
				errs = append(errs, field.Invalid(pp.Child("targetPort"), p.TargetPort, msg))
			}
		}
		if p.AppProtocol != nil {
			for _, msg := range validation.IsQualifiedName(*p.AppProtocol) {
				errs = append(errs, field.Invalid(pp.Child("appProtocol"), *p.AppProtocol, msg))
			}
		}
		if s.Spec.Type == corev1.ServiceTypeClusterIP && p.NodePort != 0 {
			errs = append(errs, field.Forbidden(pp.Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
		}
		k := fmt.Sprintf("%s/%d", p.Protocol, p.Port)
		if pps[k] {
			errs = append(errs, field.Duplicate(pp, k))
		}
		pps[k] = true
	}
	switch s.Spec.SessionAffinity {
	case corev1.ServiceAffinityClientIP:
		// Defaulting filled in any missing part; only the range is left to check.
		if t := *s.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds; t <= 0 || t > maxClientIPAffinitySeconds {
			errs = append(errs, field.Invalid(spec.Child("sessionAffinityConfig", "clientIP", "timeoutSeconds"), t, "must be greater than 0 and less than 86400"))
		}
	case corev1.ServiceAffinityNone:
	default:
		errs = append(errs, field.NotSupported(spec.Child("sessionAffinity"), s.Spec.SessionAffinity, []string{"ClientIP", "None"}))
	}
	switch s.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName:
	default:
		errs = append(errs, field.NotSupported(spec.Child("type"), s.Spec.Type, []string{"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}))
	}
	if s.Spec.ExternalTrafficPolicy != "" && s.Spec.Type != corev1.ServiceTypeNodePort && s.Spec.Type != corev1.ServiceTypeLoadBalancer && len(s.Spec.ExternalIPs) == 0 {
		errs = append(errs, field.Invalid(spec.Child("externalTrafficPolicy"), s.Spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
	}
	if p := s.Spec.InternalTrafficPolicy; p != nil && *p != corev1.ServiceInternalTrafficPolicyCluster && *p != corev1.ServiceInternalTrafficPolicyLocal {
		errs = append(errs, field.NotSupported(spec.Child("internalTrafficPolicy"), *p, []string{"Cluster", "Local"}))
	}
	if td := s.Spec.TrafficDistribution; td != nil && *td != corev1.ServiceTrafficDistributionPreferClose &&
		*td != corev1.ServiceTrafficDistributionPreferSameZone && *td != corev1.ServiceTrafficDistributionPreferSameNode {
		errs = append(errs, field.NotSupported(spec.Child("trafficDistribution"), *td, []string{"PreferClose", "PreferSameNode", "PreferSameZone"}))
	}
	errs = append(errs, validateIPFamilies(s, spec)...)
	return errs
}

// validateIPFamilies: the ipFamilyPolicy/ipFamilies rules of ValidateServiceClusterIPsRelatedFields.
func validateIPFamilies(s *corev1.Service, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if p := s.Spec.IPFamilyPolicy; p != nil {
		switch *p {
		case corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack:
		default:
			errs = append(errs, field.NotSupported(spec.Child("ipFamilyPolicy"), *p, []string{"PreferDualStack", "RequireDualStack", "SingleStack"}))
		}
		if *p == corev1.IPFamilyPolicySingleStack && len(s.Spec.IPFamilies) > 1 {
			errs = append(errs, field.Invalid(spec.Child("ipFamilyPolicy"), *p, "must be RequireDualStack or PreferDualStack when multiple 'ipFamilies' are specified"))
		}
	}
	if len(s.Spec.IPFamilies) > 2 {
		errs = append(errs, field.Invalid(spec.Child("ipFamilies"), s.Spec.IPFamilies, "may specify no more than one IP for each IP family"))
	}
	seen := map[corev1.IPFamily]bool{}
	for i, f := range s.Spec.IPFamilies {
		if f != corev1.IPv4Protocol && f != corev1.IPv6Protocol {
			errs = append(errs, field.NotSupported(spec.Child("ipFamilies").Index(i), f, []string{"IPv4", "IPv6"}))
		}
		if seen[f] {
			errs = append(errs, field.Duplicate(spec.Child("ipFamilies").Index(i), f))
		}
		seen[f] = true
	}
	return errs
}

// validateEndpointSlice lists what the apiserver would refuse in a create of in.
func validateEndpointSlice(in *discoveryv1.EndpointSlice) field.ErrorList {
	s := in.DeepCopy()
	for i := range s.Ports { // SetDefaults_EndpointPort
		if s.Ports[i].Name == nil {
			s.Ports[i].Name = ptr("")
		}
		if s.Ports[i].Protocol == nil {
			s.Ports[i].Protocol = ptr(corev1.ProtocolTCP)
		}
	}
	errs := apimachineryvalidation.ValidateObjectMeta(&s.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if !supportedAddrTypes[s.AddressType] {
		errs = append(errs, field.NotSupported(field.NewPath("addressType"), s.AddressType, []string{"FQDN", "IPv4", "IPv6"}))
	}
	ports := field.NewPath("ports")
	if len(s.Ports) > maxSlicePorts {
		errs = append(errs, field.TooMany(ports, len(s.Ports), maxSlicePorts))
	}
	names := map[string]bool{}
	for i, p := range s.Ports {
		pp := ports.Index(i)
		if *p.Name != "" {
			for _, msg := range validation.IsDNS1123Label(*p.Name) {
				errs = append(errs, field.Invalid(pp.Child("name"), *p.Name, msg))
			}
		}
		if names[*p.Name] {
			errs = append(errs, field.Duplicate(pp.Child("name"), *p.Name))
		}
		names[*p.Name] = true
		if !supportedProtocols[*p.Protocol] {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), *p.Protocol, []string{"SCTP", "TCP", "UDP"}))
		}
		if p.AppProtocol != nil {
			for _, msg := range validation.IsQualifiedName(*p.AppProtocol) {
				errs = append(errs, field.Invalid(pp.Child("appProtocol"), *p.AppProtocol, msg))
			}
		}
	}
	eps := field.NewPath("endpoints")
	if len(s.Endpoints) > maxSliceEndpoints {
		errs = append(errs, field.TooMany(eps, len(s.Endpoints), maxSliceEndpoints))
	}
	for i, e := range s.Endpoints {
		ap := eps.Index(i).Child("addresses")
		if len(e.Addresses) == 0 || len(e.Addresses) > maxEndpointAddresses {
			errs = append(errs, field.Invalid(ap, len(e.Addresses), "must contain 1 to 100 addresses"))
		}
		for j, a := range e.Addresses {
			errs = append(errs, validateAddress(s.AddressType, a, ap.Index(j))...)
		}
		if e.Hostname != nil {
			for _, msg := range validation.IsDNS1123Label(*e.Hostname) {
				errs = append(errs, field.Invalid(eps.Index(i).Child("hostname"), *e.Hostname, msg))
			}
		}
		if e.Hints != nil && len(e.Hints.ForZones) > maxZoneHints {
			errs = append(errs, field.TooMany(eps.Index(i).Child("hints", "forZones"), len(e.Hints.ForZones), maxZoneHints))
		}
		if e.Hints != nil { // validateHints: each zone once, a label value
			seen := map[string]bool{}
			for j, z := range e.Hints.ForZones {
				p := eps.Index(i).Child("hints", "forZones").Index(j).Child("name")
				if seen[z.Name] {
					errs = append(errs, field.Duplicate(p, z.Name))
				}
				seen[z.Name] = true
				for _, msg := range validation.IsValidLabelValue(z.Name) {
					errs = append(errs, field.Invalid(p, z.Name, msg))
				}
			}
		}
	}
	return errs
}

func validateAddress(t discoveryv1.AddressType, a string, p *field.Path) field.ErrorList {
	switch t {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		ip, err := netip.ParseAddr(a)
		if err != nil || (t == discoveryv1.AddressTypeIPv4) != ip.Is4() || ip.IsUnspecified() || ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() {
			return field.ErrorList{field.Invalid(p, a, "must be a valid "+string(t)+" endpoint address")}
		}
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(p, a)
	}
	return nil
}

// checkValid fails t on any planned Service or EndpointSlice the apiserver would refuse, and on
// any slice port kube-proxy could not match to a port of the Service it is labelled for: it
// joins them by port name and protocol (k8s.io/kubernetes pkg/proxy/endpointslicecache.go,
// ServicePortName{Port: name, Protocol}), so a port that matches none carries no traffic.
func checkValid(t interface {
	Helper()
	Fatalf(string, ...any)
}, d Desired) {
	t.Helper()
	for id, cd := range d.Clusters {
		svcPorts := map[string]map[string]bool{}
		for _, s := range cd.Services {
			if errs := validateService(s); len(errs) > 0 {
				t.Fatalf("%s: Service %s/%s would be refused: %v\nports %+v", id, s.Namespace, s.Name, errs.ToAggregate(), s.Spec.Ports)
			}
			ps := map[string]bool{}
			for _, p := range defaultedService(s).Spec.Ports {
				ps[p.Name+"/"+string(p.Protocol)] = true
			}
			svcPorts[s.Namespace+"/"+s.Name] = ps
		}
		for _, s := range cd.EndpointSlices {
			if errs := validateEndpointSlice(s); len(errs) > 0 {
				t.Fatalf("%s: EndpointSlice %s/%s would be refused: %v\nports %s", id, s.Namespace, s.Name, errs.ToAggregate(), renderSlicePorts(s))
			}
			svc := s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName]
			ps, ok := svcPorts[svc]
			if !ok {
				t.Fatalf("%s: EndpointSlice %s/%s is labelled for Service %s, which is not planned", id, s.Namespace, s.Name, svc)
			}
			for _, p := range s.Ports {
				proto := corev1.ProtocolTCP
				if p.Protocol != nil {
					proto = *p.Protocol
				}
				if !ps[strPtrVal(p.Name)+"/"+string(proto)] {
					t.Fatalf("%s: EndpointSlice %s/%s port %q/%s matches no port of Service %s: %v", id, s.Namespace, s.Name, strPtrVal(p.Name), proto, svc, ps)
				}
			}
		}
	}
}

func renderSlicePorts(s *discoveryv1.EndpointSlice) string {
	out := ""
	for _, p := range s.Ports {
		out += fmt.Sprintf("[%q %s %d] ", strPtrVal(p.Name), ptrVal(p.Protocol), ptrVal(p.Port))
	}
	return out
}

func ptrVal[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
