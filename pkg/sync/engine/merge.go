package engine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

// constituent is a valid ServiceExport together with the Service it exports.
type constituent struct {
	cluster string
	export  *mcsv1beta1.ServiceExport
	svc     *corev1.Service
}

// sortConstituents puts the oldest export first; cluster ID breaks ties so the order never
// depends on input order.
func sortConstituents(cons []constituent) {
	sort.SliceStable(cons, func(i, j int) bool {
		ti, tj := cons[i].export.CreationTimestamp.Time, cons[j].export.CreationTimestamp.Time
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return cons[i].cluster < cons[j].cluster
	})
}

// merged is the clusterset-wide view of one exported service.
type merged struct {
	typ            mcsv1beta1.ServiceImportType
	ports          []mcsv1beta1.ServicePort // the union's, as the import carries them
	union          []unionPort
	affinity       corev1.ServiceAffinity
	affinityConfig *corev1.SessionAffinityConfig
	ipFamilies     []corev1.IPFamily
	itp            *corev1.ServiceInternalTrafficPolicy
	td             *string
	labels         map[string]string
	annotations    map[string]string
	conflicts      []Conflict // sorted by reason
}

const defaultAffinityTimeout = int32(10800) // corev1.DefaultClientIPServiceAffinitySeconds

func normAffinity(a corev1.ServiceAffinity) corev1.ServiceAffinity {
	if a == "" {
		return corev1.ServiceAffinityNone
	}
	return a
}

// affinityTimeout is the effective ClientIP timeout, applying the apiserver default.
func affinityTimeout(c *corev1.SessionAffinityConfig) int32 {
	if c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
		return defaultAffinityTimeout
	}
	return *c.ClientIP.TimeoutSeconds
}

func normITP(p *corev1.ServiceInternalTrafficPolicy) string {
	if p == nil || *p == "" {
		return string(corev1.ServiceInternalTrafficPolicyCluster)
	}
	return string(*p)
}

func normProtocol(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

func strPtrVal(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func renderMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return orNone(strings.Join(parts, ","))
}

// conflictMessage says what is used and, for each losing export, the value that lost.
func conflictMessage(what, value, winner string, losing []LosingExport, total int) string {
	return fitMessage(fmt.Sprintf("Conflicting %s. Using %q from oldest service export in %q.", what, value, winner),
		groupLosses(" Not using ", losing, func(l LosingExport) string { return l.Value }, "from"),
		fmt.Sprintf(" %d/%d clusters disagree.", len(losing), total))
}

// attribute is one scalar property compared across constituents. key returns the normalised
// value used both for comparison and in the message; ok=false leaves a constituent out.
type attribute struct {
	reason mcsv1beta1.ServiceExportConditionReason
	what   string
	key    func(c constituent) (string, bool)
}

var attributes = []attribute{
	{mcsv1beta1.ServiceExportReasonTypeConflict, "type", func(c constituent) (string, bool) {
		return string(mcsapi.ImportType(c.svc)), true
	}},
	{mcsv1beta1.ServiceExportReasonSessionAffinityConflict, "session affinity", func(c constituent) (string, bool) {
		return string(normAffinity(c.svc.Spec.SessionAffinity)), true
	}},
	// The timeout only means something under ClientIP; a None/ClientIP split is already an
	// affinity conflict, so None constituents are left out here rather than counted twice.
	{mcsv1beta1.ServiceExportReasonSessionAffinityConfigConflict, "session affinity config", func(c constituent) (string, bool) {
		if normAffinity(c.svc.Spec.SessionAffinity) != corev1.ServiceAffinityClientIP {
			return "", false
		}
		return "timeoutSeconds=" + strconv.Itoa(int(affinityTimeout(c.svc.Spec.SessionAffinityConfig))), true
	}},
	{mcsv1beta1.ServiceExportReasonInternalTrafficPolicyConflict, "internal traffic policy", func(c constituent) (string, bool) {
		return normITP(c.svc.Spec.InternalTrafficPolicy), true
	}},
	{mcsv1beta1.ServiceExportReasonTrafficDistributionConflict, "traffic distribution", func(c constituent) (string, bool) {
		return orNone(strPtrVal(c.svc.Spec.TrafficDistribution)), true
	}},
	{mcsv1beta1.ServiceExportReasonIPFamilyConflict, "IP families", func(c constituent) (string, bool) {
		fams := make([]string, len(c.svc.Spec.IPFamilies))
		for i, f := range c.svc.Spec.IPFamilies {
			fams[i] = string(f)
		}
		return orNone(strings.Join(fams, ",")), true
	}},
	{mcsv1beta1.ServiceExportReasonLabelsConflict, "exported labels", func(c constituent) (string, bool) {
		return renderMap(c.export.Spec.ExportedLabels), true
	}},
	{mcsv1beta1.ServiceExportReasonAnnotationsConflict, "exported annotations", func(c constituent) (string, bool) {
		return renderMap(c.export.Spec.ExportedAnnotations), true
	}},
}

// mergeConstituents resolves the service's clusterset view; cons must be sorted oldest first.
func mergeConstituents(ns, name string, cons []constituent) merged {
	w := cons[0]
	m := merged{
		typ:            mcsapi.ImportType(w.svc),
		affinity:       normAffinity(w.svc.Spec.SessionAffinity),
		affinityConfig: w.svc.Spec.SessionAffinityConfig.DeepCopy(),
		ipFamilies:     append([]corev1.IPFamily(nil), w.svc.Spec.IPFamilies...),
		labels:         w.export.Spec.ExportedLabels,
		annotations:    w.export.Spec.ExportedAnnotations,
	}
	if w.svc.Spec.InternalTrafficPolicy != nil {
		p := *w.svc.Spec.InternalTrafficPolicy
		m.itp = &p
	}
	if w.svc.Spec.TrafficDistribution != nil {
		s := *w.svc.Spec.TrafficDistribution
		m.td = &s
	}
	if m.affinity != corev1.ServiceAffinityClientIP {
		m.affinityConfig = nil
	}

	newConflict := func(reason mcsv1beta1.ServiceExportConditionReason, losing []LosingExport) Conflict {
		sort.Slice(losing, func(i, j int) bool { return losing[i].Cluster < losing[j].Cluster })
		dis := make([]string, len(losing))
		for i, l := range losing {
			dis[i] = l.Cluster
		}
		return Conflict{Namespace: ns, Service: name, Reason: string(reason),
			Winner: w.cluster, Disagreeing: dis, Total: len(cons), Losing: losing}
	}

	for _, a := range attributes {
		want, ok := a.key(w)
		if !ok {
			continue
		}
		var losing []LosingExport
		for _, c := range cons[1:] {
			if v, ok := a.key(c); ok && v != want {
				losing = append(losing, LosingExport{Cluster: c.cluster, Value: v})
			}
		}
		if len(losing) > 0 {
			c := newConflict(a.reason, losing)
			c.Message = conflictMessage(a.what, want, w.cluster, c.Losing, len(cons))
			m.conflicts = append(m.conflicts, c)
		}
	}

	var portDis []string
	m.union, portDis = mergePorts(cons)
	m.ports = unionPorts(m.union)
	if len(portDis) > 0 {
		losing, unanswered := portLosses(m.union, cons, portDis)
		c := newConflict(mcsv1beta1.ServiceExportReasonPortConflict, losing)
		c.Unanswered = unanswered
		c.Message = portsMessage(m.union, cons, c.Losing, unanswered)
		m.conflicts = append(m.conflicts, c)
	}
	sort.Slice(m.conflicts, func(i, j int) bool { return m.conflicts[i].Reason < m.conflicts[j].Reason })
	return m
}
