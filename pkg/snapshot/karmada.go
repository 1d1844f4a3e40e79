package snapshot

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// Karmada is what was read from a Karmada control plane (member.ControlPlane), for status and
// diagnose: its objects as served, undecoded.
type Karmada struct {
	// ControlPlane names the control plane (its context).
	ControlPlane         string
	MultiClusterServices []*unstructured.Unstructured
	ServiceExports       []*unstructured.Unstructured
	ServiceImports       []*unstructured.Unstructured
	// Policies are the PropagationPolicies and ClusterPropagationPolicies
	// (policy.karmada.io/v1alpha1).
	Policies []*unstructured.Unstructured
	// Services are the namespace/name of the control plane's Services.
	Services []Key
	// ResourceBindings (work.karmada.io/v1alpha2) are where Karmada's scheduler placed each
	// propagated object, or why it did not.
	ResourceBindings []*unstructured.Unstructured
}
