package clusterset

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Namespace is the namespace a read-only command looks at: -n, else the kubeconfig's; "" with -A.
func Namespace(flags *genericclioptions.ConfigFlags, allNamespaces bool) (string, error) {
	if allNamespaces {
		return "", nil
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	return ns, err
}

// ValidateService checks the optional SERVICE argument of a read-only command: a Service name,
// within one namespace. done is what the command does with it ("shown", "diagnosed").
func ValidateService(service string, allNamespaces bool, done string) error {
	if service == "" {
		return nil
	}
	if allNamespaces {
		return fmt.Errorf("a service cannot be %s by name across all namespaces: drop -A or the SERVICE", done)
	}
	if errs := validation.IsDNS1035Label(service); len(errs) > 0 {
		return fmt.Errorf("service %q: not a valid Service name: %s", service, errs[0])
	}
	return nil
}
