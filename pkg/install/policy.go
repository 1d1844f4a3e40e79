package install

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

// policyGroupVersion serves ValidatingAdmissionPolicy from Kubernetes 1.30.
const policyGroupVersion = "admissionregistration.k8s.io/v1"

// Writer is the user the apiserver sees sync's writer ServiceAccount as.
func Writer(namespace string) string { return "system:serviceaccount:" + namespace + ":" + Name }

// PolicyRule is one check of the admission policy: the CEL expression a request of the writer
// must pass, and the message it is denied with.
type PolicyRule struct{ Expression, Message string }

// PolicyRules confine the writer to what sync owns, whatever RBAC grants it: Services and
// EndpointSlices carrying our managed-by label, in the request (not on DELETE) and as they were
// (not on CREATE: a server-side apply patch is an UPDATE, so a user's object cannot be relabelled
// ours); new Services named derived-NAME only; its own Lease. ServiceImports, ServiceExport
// status and Events need no more than RBAC.
func PolicyRules(namespace string) []PolicyRule {
	return []PolicyRule{
		{ownedOnly("services", names.ManagedByLabel, names.ManagedByValue),
			fmt.Sprintf("kubectl-mcs sync may only write Services it manages (%s=%s)", names.ManagedByLabel, names.ManagedByValue)},
		{"request.resource.resource != 'services' || request.operation != 'CREATE' || object.metadata.name.startsWith('" + names.DerivedServiceName("") + "')",
			"kubectl-mcs sync may only create Services named " + names.DerivedServiceName("NAME")},
		{ownedOnly("endpointslices", names.EndpointSliceManagedByLabel, names.EndpointSliceManagedByValue),
			fmt.Sprintf("kubectl-mcs sync may only write EndpointSlices it manages (%s=%s)", names.EndpointSliceManagedByLabel, names.EndpointSliceManagedByValue)},
		{fmt.Sprintf("request.resource.resource != 'leases' || (request.namespace == '%s' && request.name == '%s')", namespace, rbac.LeaseName),
			fmt.Sprintf("kubectl-mcs sync may only write its Lease %s/%s", namespace, rbac.LeaseName)},
	}
}

// ownedOnly: a request on resource passes when its object (but on DELETE) and old object (but on
// CREATE) carry key=value; a request on another resource is not this rule's.
func ownedOnly(resource, key, value string) string {
	has := func(obj string) string {
		return fmt.Sprintf("%s.metadata.?labels['%s'].orValue('') == '%s'", obj, key, value)
	}
	return fmt.Sprintf("request.resource.resource != '%s' || ((request.operation == 'DELETE' || %s) && (request.operation == 'CREATE' || %s))",
		resource, has("object"), has("oldObject"))
}

// PolicyObjects are the ValidatingAdmissionPolicy Name holding PolicyRules for the writer alone
// (a matchCondition on its user name), and its binding, denying every request that fails one.
func PolicyObjects(namespace string) []runtime.Object {
	writes := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete}
	all := admissionregistrationv1.AllScopes
	rule := func(group, resource string) admissionregistrationv1.NamedRuleWithOperations {
		return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: writes,
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}, Scope: &all},
		}}
	}
	// matchConstraints is atomic: given without the apiserver's defaults, every apply would
	// replace it and a second install would say configured.
	equivalent := admissionregistrationv1.Equivalent
	var validations []admissionregistrationv1.Validation
	for _, r := range PolicyRules(namespace) {
		validations = append(validations, admissionregistrationv1.Validation{Expression: r.Expression, Message: r.Message})
	}
	fail := admissionregistrationv1.Fail
	tm := func(kind string) metav1.TypeMeta { return metav1.TypeMeta{APIVersion: policyGroupVersion, Kind: kind} }
	return []runtime.Object{
		&admissionregistrationv1.ValidatingAdmissionPolicy{TypeMeta: tm("ValidatingAdmissionPolicy"), ObjectMeta: meta(Name, ""),
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: &fail,
				MatchConstraints: &admissionregistrationv1.MatchResources{MatchPolicy: &equivalent,
					NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
					ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
						rule("", "services"), rule("discovery.k8s.io", "endpointslices"), rule("coordination.k8s.io", "leases")}},
				MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "sync-writer",
					Expression: fmt.Sprintf("request.userInfo.username == '%s'", Writer(namespace))}},
				Validations: validations,
			}},
		&admissionregistrationv1.ValidatingAdmissionPolicyBinding{TypeMeta: tm("ValidatingAdmissionPolicyBinding"), ObjectMeta: meta(Name, ""),
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: Name,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}},
	}
}

// policyServed says whether member m serves ValidatingAdmissionPolicy (discovery).
func policyServed(m *clusterset.Connection) (bool, error) {
	list, err := m.Discovery.ServerResourcesForGroupVersion(policyGroupVersion)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("cluster %q: discovery of %s: %w", m.ID, policyGroupVersion, err)
	}
	for _, r := range list.APIResources {
		if r.Name == "validatingadmissionpolicies" {
			return true, nil
		}
	}
	return false, nil
}
