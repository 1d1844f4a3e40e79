package install

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
)

// ReaderRole is the ClusterRole of every reader identity in a member (rbac.ReaderRules).
const ReaderRole = "kubectl-mcs-reader"

// saDir is where a pod's projected ServiceAccount token and CA are mounted.
const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// ReaderName names, in every other member, the ServiceAccount and ClusterRoleBinding that member
// id's sync reads it as: kubectl-mcs-reader-ID, or when that is no DNS label (an ID too long, or
// with dots) its cleaned prefix and a hash of the ID, so that two IDs never share one.
func ReaderName(id string) string {
	name := ReaderRole + "-" + id
	if len(validation.IsDNS1123Label(name)) == 0 {
		return name
	}
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(name))
	h := names.Hash(id)
	clean = strings.TrimRight(clean[:min(len(clean), validation.DNS1123LabelMaxLength-len(h)-1)], "-")
	return clean + "-" + h
}

// ReaderTokenSecret is the token Secret of ReaderName(id).
func ReaderTokenSecret(id string) string { return ReaderName(id) + "-token" }

// readerObjects are, in member c.Local, the identities the other members' syncs read it with:
// the ClusterRole of rbac.ReaderRules and, for every other member, a ServiceAccount, its token
// Secret and a ClusterRoleBinding of its own, so that cutting one member off is one deletion.
func readerObjects(c Config) []runtime.Object {
	out := []runtime.Object{clusterRole(ReaderRole, rbac.ReaderRules())}
	for _, m := range c.Members {
		if m.ID == c.Local {
			continue
		}
		name := ReaderName(m.ID)
		out = append(out, namedServiceAccount(name, c.Namespace), tokenSecret(ReaderTokenSecret(m.ID), name, c.Namespace),
			clusterRoleBinding(name, ReaderRole, name, c.Namespace))
	}
	// Labelled apart, so that the readers go in one deletion when a member stops lending them
	// (the move to host mode, or cutting the others off).
	for _, o := range out {
		m, _ := apimeta.Accessor(o)
		m.GetLabels()[ComponentLabel] = ReaderComponent
	}
	return out
}

// ComponentLabel, ReaderComponent: the label of the readers' objects.
const (
	ComponentLabel  = "app.kubernetes.io/component"
	ReaderComponent = "reader"
)

// InClusterKubeconfig is member id's kubeconfig for its own pods: its apiserver by the kubernetes
// Service, with the CA and token files every pod has mounted. client-go rereads a tokenFile, so
// the rotated projected token keeps working.
func InClusterKubeconfig(id string) ([]byte, error) {
	return write(id, &clientcmdapi.Cluster{Server: InClusterServer, CertificateAuthority: saDir + "/ca.crt"},
		&clientcmdapi.AuthInfo{TokenFile: saDir + "/token"})
}
