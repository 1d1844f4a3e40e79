package status

// One cluster's part of a service's status, the per-cluster breakdown of buildItem: its export,
// its own Service, its import and the endpoints it imported.

import (
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// The import states its Ready condition gives, when False (mcs-api v1beta1 reasons): a False
// Ready with another reason is shown by that reason.
const (
	ImportPending              ImportState = ImportState(mcsv1beta1.ServiceImportReasonPending)              // sync is still writing the derived Service or the first copies
	ImportIPFamilyNotSupported ImportState = ImportState(mcsv1beta1.ServiceImportReasonIPFamilyNotSupported) // the cluster is not configured for the exported IP family
)

// cluster is one cluster's part: its export, its own Service, its import and what it imported.
func (b *item) cluster(ix *index, invalid map[string]engine.InvalidExport) ClusterStatus {
	k := b.k
	cs := ClusterStatus{Cluster: ix.ID, State: ix.State}
	switch ix.State {
	case snapshot.Unreachable:
		cs.ImportState = ImportUnreachable
	case snapshot.NoCRDs:
		cs.ImportState = ImportNoCRDs
	case snapshot.Error:
		cs.ImportState = ImportError
	}
	if !ix.HasData() {
		return cs
	}
	cs.NamespaceExists = ix.hasNamespace(k.Namespace)
	if exp := ix.Exports[k]; exp != nil {
		cs.Export = b.export(ix, exp, invalid)
	}
	if svc := ix.Services[k]; svc != nil && !names.IsManaged(svc.Labels) {
		cs.Service = &ServiceStatus{Type: serviceType(svc), ClusterIPs: svc.Spec.ClusterIPs}
		r, t := count(ix.Sources[k])
		cs.Endpoints = &SourceEndpoints{Cluster: ix.ID, Ready: r, Total: t, LastKnown: ix.State != snapshot.Reachable}
	}
	switch si := ix.Imports[k]; {
	case si != nil:
		cs.Import = importStatus(ix, k, si)
		cs.ImportState = ImportReady
		ready := meta.FindStatusCondition(si.Status.Conditions, string(mcsv1beta1.ServiceImportConditionReady))
		switch {
		case ready != nil && ready.Status != metav1.ConditionTrue:
			// The import's own Ready condition (sync writes it; a v1alpha1 schema without
			// conditions has none) says more than its IPs do.
			cs.ImportState = ImportState(ready.Reason)
			if ix.State == snapshot.Reachable {
				b.problems = append(b.problems, fmt.Sprintf("The ServiceImport in %q is not ready (%s): %s", ix.ID, ready.Reason, ready.Message))
			}
		case si.Spec.Type == mcsv1beta1.ClusterSetIP && len(si.Spec.IPs) == 0:
			cs.ImportState = ImportNoIP
			if ix.State == snapshot.Reachable {
				b.noIP = append(b.noIP, ix.ID)
			}
		}
	case cs.NamespaceExists:
		cs.ImportState = ImportMissing
		if ix.State == snapshot.Reachable {
			b.missing = append(b.missing, ix.ID)
		}
	default:
		cs.ImportState = ImportNoNamespace
		if ix.State == snapshot.Reachable {
			b.noNamespace = append(b.noNamespace, ix.ID)
		}
	}
	if ix.State != snapshot.Reachable {
		cs.ImportState = ImportUnreachable
	}
	srcs := make([]string, 0, len(ix.copies[k]))
	for src := range ix.copies[k] {
		srcs = append(srcs, src)
	}
	sort.Strings(srcs)
	for _, src := range srcs {
		r, t := count(ix.copies[k][src])
		cs.ImportedEndpoints = append(cs.ImportedEndpoints, SourceEndpoints{Cluster: src, Ready: r, Total: t})
	}
	cs.Copies = b.freshness(ix)
	return cs
}

func (b *item) export(ix *index, exp *mcsv1beta1.ServiceExport, invalid map[string]engine.InvalidExport) *ExportStatus {
	es := &ExportStatus{Valid: b.valid[ix.ID], CreationTimestamp: exp.CreationTimestamp,
		Terminating: exp.DeletionTimestamp != nil, Managed: names.IsManaged(exp.Labels), Conditions: exp.Status.Conditions}
	if es.Conditions == nil {
		es.Conditions = []metav1.Condition{}
	}
	if inv, ok := invalid[ix.ID]; ok {
		es.InvalidReason = inv.Reason
		b.problems = append(b.problems, fmt.Sprintf("The export in cluster %q is not valid (%s): %s", ix.ID, inv.Reason, inv.Message))
	} else if es.Terminating {
		es.InvalidReason = "Terminating"
		b.terminating = true
	}
	// sync could not write an object of the service: the condition names it and the apiserver's
	// answer, the same on every export, so it is told once.
	for _, c := range exp.Status.Conditions {
		if c.Type == string(mcsv1beta1.ServiceExportConditionReady) && c.Status == metav1.ConditionFalse &&
			c.Reason == string(mcsv1beta1.ServiceExportReasonFailed) && !slices.Contains(b.problems, c.Message) {
			b.problems = append(b.problems, c.Message)
		}
	}
	return es
}

func importStatus(ix *index, k key, si *mcsv1beta1.ServiceImport) *ImportStatus {
	is := &ImportStatus{Type: string(si.Spec.Type), IPs: si.Spec.IPs, Ports: []Port{}, Sources: []string{},
		Managed: names.IsManaged(si.Labels), Conditions: si.Status.Conditions}
	for _, p := range si.Spec.Ports {
		is.Ports = append(is.Ports, toPort(p))
	}
	for _, c := range si.Status.Clusters {
		is.Sources = append(is.Sources, c.Cluster)
	}
	is.DerivedService = si.Annotations[names.DerivedServiceAnnotation]
	if is.DerivedService == "" && is.Managed {
		is.DerivedService = names.DerivedServiceName(k.Name)
	}
	if d := ix.Services[key{Namespace: k.Namespace, Name: is.DerivedService}]; is.DerivedService != "" && d != nil {
		is.DerivedServiceExists = true
		for _, ip := range d.Spec.ClusterIPs {
			if ip != corev1.ClusterIPNone {
				is.DerivedServiceIPs = append(is.DerivedServiceIPs, ip)
			}
		}
	}
	return is
}

func serviceType(s *corev1.Service) string {
	if s.Spec.ClusterIP == corev1.ClusterIPNone {
		return "Headless"
	}
	if s.Spec.Type == "" {
		return string(corev1.ServiceTypeClusterIP)
	}
	return string(s.Spec.Type)
}
