// Package diagnose walks every link of the multi-cluster service chain (clusterset, exports,
// imports, DNS, Karmada, clocks) and says which one is broken and what to do about it.
//
// Checks are small pure functions over a Snapshot, what was read from every member; the command
// (pkg/cmd/diagnosecmd) reads, runs Run and prints. The Report type is the documented, versioned
// output schema of `kubectl mcs diagnose -o json|yaml` (docs/output.md, "Diagnose output
// schema"): fields are only ever added within a version.
package diagnose

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

// APIVersion is status's; KindReport is the kind of diagnose's document.
const (
	APIVersion = status.APIVersion
	KindReport = "DiagnoseReport"
)

// Severity of one result. Warnings do not fail the run.
type Severity string

const (
	OK   Severity = "ok"
	Fail Severity = "fail"
	Warn Severity = "warn"
)

// Check names, in the order their sections are printed.
const (
	CheckSync          = "sync"
	CheckReachable     = "reachable"
	CheckCRDs          = "crds"
	CheckClusterID     = "cluster-id"
	CheckRBAC          = "rbac"
	CheckClock         = "clock"
	CheckDNS           = "dns"
	CheckExportService = "export-service"
	CheckExportConds   = "export-conditions"
	CheckConflict      = "export-conflict"
	CheckEndpoints     = "export-endpoints"
	CheckImport        = "import"
	CheckImportIP      = "import-ip"
	CheckDerived       = "derived-service"
	CheckSlices        = "import-slices"
	CheckFreshness     = "import-freshness"
	CheckForeignSlice  = "foreign-slices"
	CheckKarmada       = "karmada"
	CheckKarmadaPlaced = "karmada-placement"
)

// Order is the order of the sections.
var Order = []string{CheckSync, CheckReachable, CheckCRDs, CheckClusterID, CheckRBAC, CheckClock, CheckDNS,
	CheckExportService, CheckExportConds, CheckConflict, CheckEndpoints,
	CheckImport, CheckImportIP, CheckDerived, CheckSlices, CheckFreshness, CheckForeignSlice, CheckTraffic,
	CheckKarmada, CheckKarmadaPlaced}

// Result is what one check says about one object in one cluster.
type Result struct {
	Check    string   `json:"check"`
	Cluster  string   `json:"cluster,omitempty"` // cluster ID, or the Karmada control plane's context
	Object   string   `json:"object,omitempty"`  // kind/namespace/name, or empty for the cluster itself
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Fix says in one sentence what to do; set on failures and warnings.
	Fix string `json:"fix,omitempty"`
	// Commands are the commands Fix speaks of, in its order: each one command line for a POSIX
	// shell, never part of Fix's sentence.
	Commands []shell.Command `json:"commands,omitempty"`
	// sync asks Run to add sync over the clusterset read to Commands.
	sync *syncRun
}

// syncRun is the sync a fix asks for: one pass over a namespace, or the controller (--watch)
// over every namespace.
type syncRun struct {
	namespace string
	watch     bool
}

func syncPass(namespace string) *syncRun { return &syncRun{namespace: namespace} }

var syncController = &syncRun{watch: true}

// Summary counts the results.
type Summary struct {
	Passed   int `json:"passed"`
	Failed   int `json:"failed"`
	Warnings int `json:"warnings"`
}

// Report is the document `kubectl mcs diagnose -o json|yaml` prints.
type Report struct {
	metav1.TypeMeta `json:",inline"`
	// Clusters is every member, in the order of --contexts, and whether it could be read.
	Clusters []status.ClusterInfo `json:"clusters"`
	Summary  Summary              `json:"summary"`
	// Results are sorted by check (in Order), cluster, object.
	Results []Result `json:"results"`
	// Missing: a SERVICE was asked for and no member read exports or imports it. Its checks then
	// pass vacuously; the command fails instead, naming it.
	Missing bool `json:"-"`
}

// SplitItems lets -o json marshal the results on every CPU (printers.Items).
func (r *Report) SplitItems() (any, int, func(int) any) {
	head := *r
	head.Results = []Result{}
	return &head, len(r.Results), func(i int) any { return &r.Results[i] }
}

// DeepCopyObject makes the report a runtime.Object for kubectl's printers.
func (r *Report) DeepCopyObject() runtime.Object {
	out := *r
	out.Clusters = append([]status.ClusterInfo(nil), r.Clusters...)
	out.Results = append([]Result(nil), r.Results...)
	return &out
}

// Snapshot is everything the checks look at.
type Snapshot struct {
	// Now is the local time of the read (ages are relative to it).
	Now time.Time
	// Namespace limits the checks ("": all); Service to one service ("": all).
	Namespace, Service string
	Clusters           []Cluster
	// Karmada is the control plane, when --karmada-context was given.
	Karmada *Karmada
}

// Cluster is one member: what status reads, plus what only diagnose needs.
type Cluster struct {
	snapshot.Cluster
	// ServedVersions of multicluster.x-k8s.io that serve both ServiceExports and ServiceImports.
	ServedVersions []string
	// SystemUID is the kube-system namespace's UID, which names the cluster itself: two contexts
	// with the same one are the same cluster. Empty when it could not be read.
	SystemUID string
	// ClusterProperties are the about.k8s.io ClusterProperty values by name (KEP-2149); nil when
	// the CRD is not installed.
	ClusterProperties map[string]string
	// Access is the answer to each access review of SyncAccess, asked as AccessAs (the installed
	// sync's ServiceAccount, when it is there and diagnose may ask as it; "" the current user);
	// AccessErr when they could not be asked.
	Access    []AccessAnswer
	AccessAs  string
	AccessErr string
	// CoreDNS is the kube-system/coredns ConfigMap; nil when it does not exist.
	CoreDNS    *corev1.ConfigMap
	CoreDNSErr string
	// DNSServer is the DNS server's Service (names.DNSServerName, `dns-server --print-manifests`)
	// and DNSServerSlices its EndpointSlices; nil when it does not exist. DNSServerErr says why
	// they could not be read.
	DNSServer       *corev1.Service
	DNSServerSlices []discoveryv1.EndpointSlice
	DNSServerErr    string
	// ClockOffset is the apiserver's clock minus ours (Date header, 1 s resolution); nil when
	// unknown.
	ClockOffset *time.Duration
	// ClockError is how far ClockOffset may be off besides the header's resolution: half the round
	// trip of the request it was read from (a loaded apiserver answers slowly).
	ClockError time.Duration
}

// Karmada is what was read from a Karmada control plane.
type Karmada struct {
	Context string
	Err     string
	// Status is status's view of it (health, problems and placement of every object).
	Status *status.KarmadaServiceStatusList
}
