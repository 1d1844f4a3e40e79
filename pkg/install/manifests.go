// Package install generates what runs `kubectl mcs sync --watch` inside a cluster: per member a
// ServiceAccount with exactly the rights sync uses (pkg/rbac) and a token for it, and in the host
// cluster a Deployment of two replicas under leader election reading one kubeconfig per member
// from a Secret. The builders here are pure; run.go writes and prints them. dnsserver.go builds
// what runs `kubectl mcs dns-server` in a member (`dns-server --print-manifests`).
package install

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/rbac"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/version"
)

// Names of what is generated, the same in every cluster.
const (
	DefaultNamespace  = names.SystemNamespace
	Name              = "kubectl-mcs-sync" // ServiceAccount, ClusterRole(Binding), Deployment, PDB
	TokenSecret       = Name + "-token"
	KubeconfigSecret  = Name + "-kubeconfigs"
	LeaderElection    = Name + "-leader-election" // Role and RoleBinding in the Lease cluster
	MetricsPort       = 8080
	HealthPort        = 8081
	kubeconfigDir     = "/etc/kubectl-mcs/kubeconfigs"
	appLabel          = "app.kubernetes.io/name"
	runAsUser         = 65532 // the image's "nonroot" (hack/image)
	defaultReplicaNum = 2
)

// DefaultImage is the image make built from this very checkout (IMAGE_REPO:VERSION, stamped into
// the binary: a release tag's image, or what `make image` just built); "" when make did not build
// the binary (go build, go install), which CheckImage then refuses.
func DefaultImage() string { return version.Image }

// CheckImage refuses an empty --image, saying why a build can lack a default.
func CheckImage(image string) error {
	switch {
	case image != "":
		return nil
	case version.Image == "":
		return errors.New("no default image for this build (not built by make): pass --image=REGISTRY/kubectl-mcs:TAG")
	default:
		return errors.New("--image must not be empty")
	}
}

// Labels are on everything generated for sync: ours (names.ManagedByLabel) and the app's name.
func Labels() map[string]string { return appLabels(Name) }

func appLabels(app string) map[string]string {
	return map[string]string{names.ManagedByLabel: names.ManagedByValue, appLabel: app}
}

// DeployedMember is one member as the deployed sync knows it: its cluster ID, which is also the context
// name in its kubeconfig.
type DeployedMember struct {
	ID string
	// Lease is true for the member holding the Lease.
	Lease bool
}

// Config is what the host side is generated from.
type Config struct {
	Namespace string
	Image     string
	Members   []DeployedMember // in --contexts order
	Replicas  int32
	Memory    Resources // sync's container (Footprint.Memory, or the flags)
	// UnreachableTimeout is passed on as sync's --unreachable-timeout when set.
	UnreachableTimeout time.Duration
	// Local is, per member (--mode=per-member), the member this Deployment runs in and acts for
	// (sync --local); "" in host mode.
	Local string
}

// LeaseMember is the member that holds the Lease.
func (c Config) LeaseMember() string {
	for _, m := range c.Members {
		if m.Lease {
			return m.ID
		}
	}
	return ""
}

func meta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: Labels()}
}

// MemberObjects is what member m needs so that sync can act there as ServiceAccount Name: the
// Namespace, the ServiceAccount, the ClusterRole of rules' cluster-wide part and its binding, in
// the Lease member a Role for the Lease, and a token Secret the token controller fills, except in
// c.Local (per-member), whose own pods use their projected token and which gives every other
// member's sync an identity to read it with (readerObjects).
func MemberObjects(c Config, m DeployedMember, rules []rbac.Rule) []runtime.Object {
	out := []runtime.Object{namespaceObject(c.Namespace), serviceAccount(c.Namespace)}
	if m.ID != c.Local {
		out = append(out, tokenSecret(TokenSecret, Name, c.Namespace))
	}
	out = append(out, clusterRole(Name, rules), clusterRoleBinding(Name, Name, Name, c.Namespace))
	if m.Lease {
		subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: Name, Namespace: c.Namespace}}
		out = append(out,
			&rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
				ObjectMeta: meta(LeaderElection, c.Namespace), Rules: rbac.PolicyRules(rules, rbac.LeaseNamespace)},
			&rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
				ObjectMeta: meta(LeaderElection, c.Namespace), Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: LeaderElection}})
	}
	if m.ID == c.Local {
		out = append(out, readerObjects(c)...)
	}
	return out
}

// tokenSecret is a token Secret of ServiceAccount sa, which the token controller fills.
func tokenSecret(name, sa, namespace string) *corev1.Secret {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(name, namespace),
		Type:       corev1.SecretTypeServiceAccountToken,
	}
	s.Annotations = map[string]string{corev1.ServiceAccountNameKey: sa}
	return s
}

func clusterRole(name string, rules []rbac.Rule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: meta(name, ""), Rules: rbac.PolicyRules(rules, rbac.Cluster)}
}

// clusterRoleBinding binds ClusterRole role to ServiceAccount namespace/sa.
func clusterRoleBinding(name, role, sa, namespace string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: meta(name, ""), Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: namespace}},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
}

// namespaceObject is the Namespace sync and the DNS server share: labelled as kubectl-mcs's, by
// neither app's name, so that applying either's objects leaves it as the other left it.
func namespaceObject(name string) *corev1.Namespace {
	return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{names.ManagedByLabel: names.ManagedByValue, partOfLabel: names.ManagedByValue}}}
}

const partOfLabel = "app.kubernetes.io/part-of"

// serviceAccount is the writer, the same object whether MemberObjects or HostObjects makes it
// (in host mode the host member gets both), so that a second install changes nothing. Its token
// is mounted only where a pod asks for it: per member, the Deployment does.
func serviceAccount(namespace string) *corev1.ServiceAccount {
	sa := namedServiceAccount(Name, namespace)
	sa.AutomountServiceAccountToken = new(bool)
	return sa
}

func namedServiceAccount(name, namespace string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta(name, namespace)}
}

// KubeconfigChecksumAnnotation on the pod template is a checksum of the kubeconfig Secret's data.
const KubeconfigChecksumAnnotation = "mcs.kubectl.io/kubeconfigs-checksum"

// checksum is a sha256 over data's keys and values, in key order.
func checksum(data map[string][]byte) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		fmt.Fprintf(h, "%d:%s%d:", len(k), k, len(data[k]))
		h.Write(data[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// KubeconfigKey is the key of a member's kubeconfig in the Secret.
func KubeconfigKey(id string) string { return id + ".kubeconfig" }

// HostObjects is what the cluster running sync holds besides MemberObjects: the kubeconfig
// Secret, the Deployment and its PodDisruptionBudget; in host mode also the Namespace and the
// pod's ServiceAccount (no token mounted, no rights: every member, the host included, is reached
// through its kubeconfig), which per member are the writer's, among MemberObjects.
func HostObjects(c Config, kubeconfigs map[string][]byte) []runtime.Object {
	secret := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(KubeconfigSecret, c.Namespace),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{},
	}
	ids := make([]string, 0, len(kubeconfigs))
	for id, kc := range kubeconfigs {
		secret.Data[KubeconfigKey(id)] = kc
		ids = append(ids, id)
	}
	sort.Strings(ids)
	minAvailable := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: meta(Name, c.Namespace),
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{appLabel: Name}}},
	}
	// The pods read their kubeconfigs once: a changed Secret changes the template, which rolls them.
	d := Deployment(c)
	d.Spec.Template.Annotations = map[string]string{KubeconfigChecksumAnnotation: checksum(secret.Data)}
	if c.Local != "" {
		return []runtime.Object{secret, d, pdb}
	}
	return []runtime.Object{namespaceObject(c.Namespace), serviceAccount(c.Namespace), secret, d, pdb}
}

// Args are the deployed sync's arguments.
func Args(c Config) []string {
	ids := make([]string, len(c.Members))
	for i, m := range c.Members {
		ids[i] = m.ID
	}
	args := []string{"sync", "--watch",
		"--contexts=" + strings.Join(ids, ","),
		"--leader-elect", "--leader-elect-context=" + c.LeaseMember(), "--leader-elect-namespace=" + c.Namespace,
		fmt.Sprintf("--metrics-bind-address=:%d", MetricsPort),
		fmt.Sprintf("--health-probe-bind-address=:%d", HealthPort),
	}
	if c.Local != "" {
		args = append(args, "--local="+c.Local)
	}
	if c.UnreachableTimeout > 0 {
		args = append(args, "--unreachable-timeout="+c.UnreachableTimeout.String())
	}
	return args
}

// Deployment runs Replicas of sync --watch, one leading at a time, each member read through its
// kubeconfig (KUBECONFIG lists them; clientcmd merges the files, whose names never collide).
func Deployment(c Config) *appsv1.Deployment {
	paths := make([]string, len(c.Members))
	for i, m := range c.Members {
		paths[i] = kubeconfigDir + "/" + KubeconfigKey(m.ID)
	}
	container := corev1.Container{
		Name:  "sync",
		Image: c.Image,
		Args:  Args(c),
		Env: []corev1.EnvVar{{Name: "KUBECONFIG", Value: strings.Join(paths, ":")},
			{Name: "HOME", Value: "/tmp"},
			// The limit as it is, even when edited after generation: sync keeps its heap under 90% of it.
			{Name: MemoryLimitEnv, ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{
				ContainerName: "sync", Resource: "limits.memory"}}}},
		Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP},
			{Name: "health", ContainerPort: HealthPort, Protocol: corev1.ProtocolTCP}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: orDefault(c.Memory.Request, minRequest)},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: orDefault(c.Memory.Limit, minLimit)},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "kubeconfigs", MountPath: kubeconfigDir, ReadOnly: true},
			{Name: "tmp", MountPath: "/tmp"}},
	}
	// Host mode reaches every member, the host included, through its kubeconfig: no token
	// mounted. Per member, the pods act in their own cluster with their projected token, which
	// that member's kubeconfig reads (InClusterKubeconfig).
	d := deployment(Name, c.Namespace, c.Replicas, container)
	d.Spec.Template.Spec.AutomountServiceAccountToken = new(c.Local != "")
	d.Spec.Template.Spec.Volumes = []corev1.Volume{
		{Name: "kubeconfigs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: KubeconfigSecret}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	return d
}

// deployment runs replicas (default two) of container as ServiceAccount app, each on a node of
// its own where there are several, non-root with a read-only root filesystem, probed on the
// container's "health" port (/healthz, /readyz).
func deployment(app, namespace string, replicas int32, container corev1.Container) *appsv1.Deployment {
	if replicas == 0 {
		replicas = defaultReplicaNum
	}
	f, t := false, true
	uid := int64(runAsUser)
	probe := func(path string, delay, period, failures int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("health")}},
			InitialDelaySeconds: delay, PeriodSeconds: period, TimeoutSeconds: 2, FailureThreshold: failures}
	}
	// Readiness is probed often: kube-proxy keeps a UDP flow to an endpoint while it serves,
	// terminating or not, and clears it only once the pod fails readiness. A draining DNS server
	// must be seen not ready well within its --shutdown-delay, or CoreDNS's pooled socket still
	// reaches it after it stopped.
	container.LivenessProbe, container.ReadinessProbe = probe("/healthz", 15, 10, 3), probe("/readyz", 2, 2, 2)
	container.SecurityContext = &corev1.SecurityContext{
		RunAsNonRoot: &t, RunAsUser: &uid, ReadOnlyRootFilesystem: &t, AllowPrivilegeEscalation: &f,
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	selector := map[string]string{appLabel: app}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: namespace, Labels: appLabels(app)},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: appLabels(app)},
				Spec: corev1.PodSpec{
					ServiceAccountName: app,
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &t,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					// Replicas on different nodes where there are several: a standby survives a node.
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100,
							PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname,
								LabelSelector: &metav1.LabelSelector{MatchLabels: selector}}}}}},
					Containers: []corev1.Container{container},
				},
			},
		},
	}
}

// Unstructured converts generated objects for the apply path.
func Unstructured(objs []runtime.Object) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: m}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "status")
		out[i] = u
	}
	return out, nil
}
