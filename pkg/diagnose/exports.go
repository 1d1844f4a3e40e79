package diagnose

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/status"
)

type key = types.NamespacedName

// objects is one member's objects by name, for the per-service checks.
type objects struct {
	exports  map[key]*mcsv1beta1.ServiceExport
	imports  map[key]*mcsv1beta1.ServiceImport
	services map[key]*corev1.Service
	// slices are every EndpointSlice by the service it belongs to (kubernetes.io/service-name).
	slices map[key][]*discoveryv1.EndpointSlice
	// copies are the imported slices by service (multicluster.kubernetes.io/service-name).
	copies map[key][]*discoveryv1.EndpointSlice
}

func objectsOf(c *snapshot.Cluster) *objects {
	o := &objects{exports: byKey(c.ServiceExports), imports: byKey(c.ServiceImports), services: byKey(c.Services),
		slices: groupBy(c.EndpointSlices, discoveryv1.LabelServiceName), copies: groupBy(c.EndpointSlices, mcsv1beta1.LabelServiceName)}
	return o
}

// byKey indexes objects by namespace/name.
func byKey[T interface {
	GetNamespace() string
	GetName() string
}](items []T) map[key]T {
	out := make(map[key]T, len(items))
	for _, x := range items {
		out[key{Namespace: x.GetNamespace(), Name: x.GetName()}] = x
	}
	return out
}

// groupBy groups slices by the service a label names (in their namespace); unlabelled ones are left out.
func groupBy(slices []*discoveryv1.EndpointSlice, label string) map[key][]*discoveryv1.EndpointSlice {
	out := map[key][]*discoveryv1.EndpointSlice{}
	for _, s := range slices {
		if n := s.Labels[label]; n != "" {
			k := key{Namespace: s.Namespace, Name: n}
			out[k] = append(out[k], s)
		}
	}
	return out
}

// sources are the slices of a member's own Service k: not written by any MCS controller.
func (o *objects) sources(k key) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, s := range o.slices[k] {
		if s.Labels[mcsv1beta1.LabelSourceCluster] == "" && !names.IsManaged(s.Labels) {
			out = append(out, s)
		}
	}
	return out
}

func objectName(kind string, k key) string { return kind + "/" + k.Namespace + "/" + k.Name }

func age(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return "unknown age"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// service is one multi-cluster service: status's row and every member's objects.
type service struct {
	key
	item *status.MultiClusterServiceStatus
}

// checkExports: per export, its Service, its conditions, its conflicts and its endpoints.
func checkExports(s *Snapshot, svcs []service, objs []*objects) []Result {
	var out []Result
	for _, sv := range svcs {
		totalReady := 0
		for _, e := range sv.item.Endpoints {
			totalReady += e.Ready
		}
		acted := lastActed(sv.key, objs)
		for i, m := range s.Clusters {
			if !readable(m) || sv.item.Clusters[i].Export == nil {
				continue
			}
			exp, svc := objs[i].exports[sv.key], objs[i].services[sv.key]
			cs := sv.item.Clusters[i]
			obj := objectName("serviceexport", sv.key)
			out = append(out, exportService(m, sv, cs, obj))
			out = append(out, exportConditions(s.Now, m, exp, svc, cs, obj, acted))
			if !cs.Export.Valid {
				continue
			}
			out = append(out, exportConflict(m, sv, obj))
			out = append(out, exportEndpoints(m, sv, cs, obj, totalReady))
		}
	}
	return out
}

func exportService(m Cluster, sv service, cs status.ClusterStatus, obj string) Result {
	r := Result{Check: CheckExportService, Cluster: m.ID, Object: obj, Severity: OK}
	switch {
	case cs.Export.Valid:
		r.Message = fmt.Sprintf("exports Service %s/%s (%s)", sv.Namespace, sv.Name, cs.Service.Type)
	case cs.Export.InvalidReason == string(mcsv1beta1.ServiceExportReasonInvalidServiceType):
		r.Severity, r.Message = Fail, fmt.Sprintf("Service %s/%s is of type ExternalName, which cannot be exported", sv.Namespace, sv.Name)
		r.Fix, r.Commands = "Export a ClusterIP or headless Service instead, or remove this export:", []shell.Command{removeExportCommand(m, sv.key, exportManaged(m, sv))}
	case cs.Export.InvalidReason == "Terminating":
		r.Message = "the export is being deleted"
	default:
		r.Severity, r.Message = Fail, fmt.Sprintf("there is no Service %s/%s in this cluster to export", sv.Namespace, sv.Name)
		r.Fix, r.Commands = fmt.Sprintf("Create the Service in %q, or remove the export:", m.ID), []shell.Command{removeExportCommand(m, sv.key, exportManaged(m, sv))}
	}
	return r
}

// exportConditions reads the controller's verdict. Conditions missing, or older than the last
// change to the export or its Service (and no write of the controller to the service's imports
// since, acted), mean no controller has looked at it since.
func exportConditions(now time.Time, m Cluster, exp *mcsv1beta1.ServiceExport, svc *corev1.Service, cs status.ClusterStatus, obj string, acted time.Time) Result {
	r := Result{Check: CheckExportConds, Cluster: m.ID, Object: obj, Severity: OK}
	runSync := "Run the MCS controller over the clusterset, or check its log if it runs:"
	conds := map[string]metav1.Condition{}
	var parts []string
	var seen time.Time
	for _, t := range []string{string(mcsv1beta1.ServiceExportConditionValid), string(mcsv1beta1.ServiceExportConditionReady), string(mcsv1beta1.ServiceExportConditionConflict)} {
		c := findCondition(cs.Export.Conditions, t)
		if c == nil {
			continue
		}
		conds[t] = *c
		parts = append(parts, fmt.Sprintf("%s=%s (%s)", t, c.Status, age(now, c.LastTransitionTime)))
		if c.LastTransitionTime.After(seen) {
			seen = c.LastTransitionTime.Time
		}
	}
	for _, t := range []time.Time{statusWritten(exp), acted} {
		if t.After(seen) {
			seen = t
		}
	}
	if len(conds) == 0 {
		if exp != nil && acted.After(exp.CreationTimestamp.Time) {
			// sync wrote the service's objects after this export appeared: it runs, and failed here.
			r.Severity = Fail
			r.Message = fmt.Sprintf("no Valid/Ready/Conflict conditions, although kubectl-mcs wrote this service's objects %s ago, after the export was created: sync runs but has not written this export's status",
				duration.HumanDuration(now.Sub(acted)))
			r.Fix = "See sync's log for the write it cannot make (the kubectl_mcs_failing_writes metric counts them) and the rbac check for serviceexports/status."
			return r
		}
		r.Severity, r.Message, r.Fix, r.sync = Fail, "no Valid/Ready/Conflict conditions: no MCS controller has processed this export (is sync running?)", runSync, syncController
		return r
	}
	r.Message = strings.Join(parts, ", ")
	changed, what := lastChange(exp, svc)
	if changed.Sub(seen) > time.Second {
		r.Severity = Fail
		r.Message += fmt.Sprintf("; the %s changed %s ago, after the conditions were last written (%s ago): no controller is running", what, duration.HumanDuration(now.Sub(changed)), duration.HumanDuration(now.Sub(seen)))
		r.Fix, r.sync = runSync, syncController
		return r
	}
	if c, ok := conds[string(mcsv1beta1.ServiceExportConditionValid)]; ok && c.Status == metav1.ConditionFalse {
		r.Severity, r.Message = Fail, r.Message+": "+c.Message
		r.Fix = fmt.Sprintf("Create a ClusterIP or headless Service %s in %q, or remove the export:", exp.Name, m.ID)
		r.Commands = []shell.Command{removeExportCommand(m, key{Namespace: exp.Namespace, Name: exp.Name}, names.IsManaged(exp.Labels))}
	} else if c, ok := conds[string(mcsv1beta1.ServiceExportConditionReady)]; ok && c.Status == metav1.ConditionFalse {
		r.Severity, r.Message = Fail, r.Message+": "+c.Message
		r.Fix = "See the import checks below for the clusters that lack the import; sync marks it Ready once every reachable importing cluster has it."
		if c.Reason == string(mcsv1beta1.ServiceExportReasonFailed) {
			r.Fix = "The apiserver refuses sync's write of the object named: remove what refuses it (an admission webhook, a quota, a policy, missing RBAC) or see sync's log; sync tries again with backoff."
		}
	}
	return r
}

func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// statusWritten is when the export's status was last written (any status field manager).
func statusWritten(exp *mcsv1beta1.ServiceExport) time.Time {
	var t time.Time
	if exp == nil {
		return t
	}
	for _, f := range exp.ManagedFields {
		if f.Subresource == "status" && f.Time != nil && f.Time.After(t) {
			t = f.Time.Time
		}
	}
	return t
}

// lastChange is when the export or its Service was last changed by anybody but kubectl-mcs's
// status writes: its creation or a managedFields entry.
func lastChange(exp *mcsv1beta1.ServiceExport, svc *corev1.Service) (time.Time, string) {
	var t time.Time
	what := ""
	consider := func(m metav1.ObjectMeta, kind string) {
		if m.CreationTimestamp.After(t) {
			t, what = m.CreationTimestamp.Time, kind
		}
		for _, f := range m.ManagedFields {
			if f.Subresource == "" && f.Time != nil && f.Time.After(t) {
				t, what = f.Time.Time, kind
			}
		}
	}
	if exp != nil {
		consider(exp.ObjectMeta, "ServiceExport")
	}
	if svc != nil {
		consider(svc.ObjectMeta, "Service")
	}
	return t, what
}

// lastActed is the last write to what the controller made for k in any member: ServiceImports,
// derived Services and slice copies, all labelled as kubectl-mcs's.
func lastActed(k key, objs []*objects) time.Time {
	var t time.Time
	latest := func(m metav1.ObjectMeta) {
		if !names.IsManaged(m.Labels) {
			return
		}
		for _, f := range m.ManagedFields {
			if f.Time != nil && f.Time.After(t) {
				t = f.Time.Time
			}
		}
	}
	for _, o := range objs {
		if si := o.imports[k]; si != nil {
			latest(si.ObjectMeta)
		}
		if d := o.services[key{Namespace: k.Namespace, Name: names.DerivedServiceName(k.Name)}]; d != nil {
			latest(d.ObjectMeta)
		}
		for _, s := range o.copies[k] {
			latest(s.ObjectMeta)
		}
	}
	return t
}

func exportConflict(m Cluster, sv service, obj string) Result {
	r := Result{Check: CheckConflict, Cluster: m.ID, Object: obj, Severity: OK, Message: "agrees with the other exports"}
	var msgs, reasons []string
	winner := ""
	for _, c := range sv.item.Conflicts {
		if contains(c.Disagreeing, m.ID) {
			msgs, reasons, winner = append(msgs, c.Message), append(reasons, c.Reason), c.Winner
		}
	}
	if len(sv.item.Conflicts) > 0 && len(msgs) == 0 {
		r.Message = "its export wins the conflicts (oldest export)"
	}
	if len(msgs) > 0 {
		sort.Strings(reasons)
		r.Severity, r.Message = Fail, strings.Join(msgs, " ")
		r.Fix = fmt.Sprintf("Make the Service in %q agree with the one in %q, whose older export wins (%s), or stop exporting it here:", m.ID, winner, strings.Join(reasons, ", "))
		r.Commands = []shell.Command{removeExportCommand(m, sv.key, exportManaged(m, sv))}
	}
	return r
}

func exportEndpoints(m Cluster, sv service, cs status.ClusterStatus, obj string, totalReady int) Result {
	r := Result{Check: CheckEndpoints, Cluster: m.ID, Object: obj, Severity: OK}
	e := cs.Endpoints
	if e == nil {
		e = &status.SourceEndpoints{}
	}
	r.Message = fmt.Sprintf("%d/%d endpoints ready", e.Ready, e.Total)
	if e.Ready > 0 {
		return r
	}
	r.Severity = Warn
	if totalReady == 0 {
		r.Severity = Fail
		r.Message += ", and none in any other exporting cluster: nothing answers"
	} else {
		r.Message += ": this cluster adds no backends"
	}
	r.Fix, r.Commands = "Check the Service's selector and pods:", []shell.Command{endpointSlicesCommand(m, sv.key)}
	return r
}
