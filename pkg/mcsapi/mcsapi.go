// Package mcsapi builds mcs-api (KEP-1645) objects and finds which version of them a cluster
// serves.
package mcsapi

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

const (
	Group    = "multicluster.x-k8s.io"
	V1beta1  = "v1beta1"
	V1alpha1 = "v1alpha1"
)

// GVR returns the resource of ServiceExport ("serviceexports") or ServiceImport in a version.
func GVR(version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Group, Version: version, Resource: resource}
}

const (
	ServiceExports = "serviceexports"
	ServiceImports = "serviceimports"
)

// ErrNotInstalled says a cluster serves neither version of the mcs-api.
type ErrNotInstalled struct{}

func (ErrNotInstalled) Error() string {
	return "the ServiceExport/ServiceImport CRDs are not installed (kubectl mcs init installs them)"
}

// ServedVersion asks discovery which mcs-api version a cluster serves, preferring v1beta1.
func ServedVersion(d discovery.DiscoveryInterface) (string, error) {
	for _, v := range []string{V1beta1, V1alpha1} {
		rl, err := d.ServerResourcesForGroupVersion(Group + "/" + v)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		has := map[string]bool{}
		for _, r := range rl.APIResources {
			has[r.Name] = true
		}
		if has[ServiceExports] && has[ServiceImports] {
			return v, nil
		}
	}
	return "", ErrNotInstalled{}
}

// ManagedLabels are the labels every object we create carries.
func ManagedLabels() map[string]string {
	return map[string]string{names.ManagedByLabel: names.ManagedByValue}
}

// ServiceExport builds the export of ns/name in the given API version.
func ServiceExport(version, ns, name string, labels, annotations map[string]string) *unstructured.Unstructured {
	se := &mcsv1beta1.ServiceExport{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: ManagedLabels()},
		Spec:       mcsv1beta1.ServiceExportSpec{ExportedLabels: labels, ExportedAnnotations: annotations},
	}
	return toUnstructured(se, version, mcsv1beta1.ServiceExportKindName)
}

// ServiceImportFromService builds the import that matches a Service: Headless for a headless
// Service, else ClusterSetIP, with its ports.
func ServiceImportFromService(version string, svc *corev1.Service) *unstructured.Unstructured {
	si := &mcsv1beta1.ServiceImport{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace, Labels: ManagedLabels()},
		Spec: mcsv1beta1.ServiceImportSpec{
			Type:                  ImportType(svc),
			Ports:                 Ports(svc.Spec.Ports),
			SessionAffinity:       svc.Spec.SessionAffinity,
			SessionAffinityConfig: svc.Spec.SessionAffinityConfig,
		},
	}
	return toUnstructured(si, version, mcsv1beta1.ServiceImportKindName)
}

// ImportType is Headless for a headless Service, ClusterSetIP otherwise.
func ImportType(svc *corev1.Service) mcsv1beta1.ServiceImportType {
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return mcsv1beta1.Headless
	}
	return mcsv1beta1.ClusterSetIP
}

// Ports converts Service ports to ServiceImport ports, defaulting the protocol to TCP.
func Ports(in []corev1.ServicePort) []mcsv1beta1.ServicePort {
	out := make([]mcsv1beta1.ServicePort, 0, len(in))
	for _, p := range in {
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		out = append(out, mcsv1beta1.ServicePort{Name: p.Name, Protocol: proto, AppProtocol: p.AppProtocol, Port: p.Port})
	}
	return out
}

func toUnstructured(obj runtime.Object, version, kind string) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		panic(fmt.Sprintf("converting %s: %v", kind, err)) // our own typed objects always convert
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(Group + "/" + version)
	u.SetKind(kind)
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return u
}

// ParseKeyValues parses "k=v,k2=v2" into a map (nil when empty).
func ParseKeyValues(flag string, items []string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range items {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--%s: %q is not KEY=VALUE", flag, kv)
		}
		out[k] = v
	}
	return out, nil
}
