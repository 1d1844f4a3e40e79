// Package version holds the build stamp and the API versions the plugin speaks.
package version

import (
	"runtime/debug"
	"strings"
)

// Set at build time with -ldflags "-X github.com/kubectl-mcs/kubectl-mcs/pkg/version.Version=...".
// Image is the container image built from the same checkout (`make image`: IMAGE_REPO:VERSION),
// the manifests' default --image; a build that make did not stamp has none, and says so.
var (
	Version = "v0.0.0-dev"
	Commit  = "unknown"
	Image   = ""
)

func init() {
	Version = fromBuildInfo(Version, debug.ReadBuildInfo)
}

// fromBuildInfo returns the module version Go recorded when nothing was stamped: `go install
// github.com/kubectl-mcs/kubectl-mcs/cmd/kubectl-mcs@vX.Y.Z` sets no ldflags but records vX.Y.Z.
func fromBuildInfo(stamped string, read func() (*debug.BuildInfo, bool)) string {
	if stamped != "v0.0.0-dev" {
		return stamped
	}
	if bi, ok := read(); ok && strings.HasPrefix(bi.Main.Version, "v") {
		return bi.Main.Version
	}
	return stamped
}

// APIs are the API groups/versions the plugin reads and writes.
var APIs = []string{
	"multicluster.x-k8s.io/v1beta1",
	"multicluster.x-k8s.io/v1alpha1",
	"networking.karmada.io/v1alpha1",
	"policy.karmada.io/v1alpha1",
	"discovery.k8s.io/v1",
	"v1",
}
