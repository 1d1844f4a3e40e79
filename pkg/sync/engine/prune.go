package engine

// Fields a member's served schema does not declare are neither written nor compared.

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// pruneTo keeps only what schema declares of obj; obj itself when schema is nil.
func pruneTo[T any, PT interface {
	*T
	runtime.Object
}](schema Pruner, obj PT) PT {
	if schema == nil {
		return obj
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return obj
	}
	if len(schema.Prune(u)) == 0 {
		return obj
	}
	out := PT(new(T))
	if runtime.DefaultUnstructuredConverter.FromUnstructured(u, out) != nil {
		return obj
	}
	return out
}

// pruneConditions keeps of the conditions what ci's served ServiceExport schema declares.
func pruneConditions(ci *clusterIndex, exp *mcsv1beta1.ServiceExport, conds []metav1.Condition) []metav1.Condition {
	if ci == nil || ci.ExportSchema == nil {
		return conds
	}
	e := &mcsv1beta1.ServiceExport{TypeMeta: exp.TypeMeta, Status: mcsv1beta1.ServiceExportStatus{Conditions: conds}}
	return pruneTo(ci.ExportSchema, e).Status.Conditions
}

// Pruning returns s when it drops something the engine writes, nil when it holds it all: a member
// serving the full mcs-api then costs no conversion on the sync path. Decided once, when the
// member joins, against objects with every field the engine sets.
func Pruning(s Pruner, kind string) Pruner {
	if s == nil {
		return nil
	}
	one, fams := int32(1), []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	itp, td, app := corev1.ServiceInternalTrafficPolicyLocal, "PreferClose", "http"
	var full runtime.Object = &mcsv1beta1.ServiceImport{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"l": "v"}, Annotations: map[string]string{"a": "v"}},
		Spec: mcsv1beta1.ServiceImportSpec{
			Ports: []mcsv1beta1.ServicePort{{Name: "p", Protocol: corev1.ProtocolTCP, AppProtocol: &app, Port: 80}},
			IPs:   []string{"10.0.0.1", "fd00::1"}, Type: mcsv1beta1.ClusterSetIP,
			SessionAffinity:       corev1.ServiceAffinityClientIP,
			SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: &one}},
			IPFamilies:            fams, InternalTrafficPolicy: &itp, TrafficDistribution: &td,
		},
		Status: mcsv1beta1.ServiceImportStatus{Clusters: []mcsv1beta1.ClusterStatus{{Cluster: "a"}, {Cluster: "b"}},
			Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, LastTransitionTime: metav1.Now(), Reason: "Ready", Message: "m"}}},
	}
	if kind == snapshot.KindServiceExport {
		full = &mcsv1beta1.ServiceExport{Status: mcsv1beta1.ServiceExportStatus{Conditions: []metav1.Condition{{
			Type: "Valid", Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: metav1.Now(),
			Reason: "Valid", Message: "m"}}}}
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(full)
	if kind == snapshot.KindServiceExport {
		delete(u, "spec") // only an export's status is ever written
	}
	if err != nil || len(s.Prune(u)) > 0 {
		return s
	}
	return nil
}
