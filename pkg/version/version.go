// Package version holds the build stamp and the API versions the plugin speaks.
package version

// Set at build time with -ldflags "-X github.com/kubectl-mcs/kubectl-mcs/pkg/version.Version=...".
var (
	Version = "v0.0.0-dev"
	Commit  = "unknown"
)

// APIs are the API groups/versions the plugin reads and writes.
var APIs = []string{
	"multicluster.x-k8s.io/v1beta1",
	"multicluster.x-k8s.io/v1alpha1",
	"networking.karmada.io/v1alpha1",
	"policy.karmada.io/v1alpha1",
	"discovery.k8s.io/v1",
	"v1",
}
