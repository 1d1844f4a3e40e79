package diagnose

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

// ClusterProperty names (KEP-2149, group about.k8s.io).
const (
	PropertyClusterID  = "cluster.clusterset.k8s.io"
	PropertyClusterset = "clusterset.k8s.io"
)

// MaxClockSkew is how far apart members' clocks may be before the oldest-export rule (which
// compares creationTimestamps written by different apiservers) can pick the wrong winner.
const MaxClockSkew = time.Second

// readable says whether a member's objects were read.
func readable(m Cluster) bool { return m.State == snapshot.Reachable }

// checkReachable: every context answers and every list succeeded.
func checkReachable(s *Snapshot) []Result {
	var out []Result
	for _, m := range s.Clusters {
		r := Result{Check: CheckReachable, Cluster: m.ID, Object: "context/" + m.Context}
		switch m.State {
		case snapshot.Reachable, snapshot.NoCRDs:
			r.Severity, r.Message = OK, "the API server answers"
		case snapshot.Unreachable:
			r.Severity, r.Message = Fail, "unreachable: "+strings.TrimPrefix(m.Message, "unreachable: ")
			r.Fix = fmt.Sprintf("Check that the cluster is up and that context %q points at it:", m.Context)
			r.Commands = []shell.Command{readyzCommand(m)}
		default:
			r.Severity, r.Message = Fail, "could not be read: "+m.Message
			r.Fix = fmt.Sprintf("Give the user of context %q list and watch on the resources named (see the rbac check).", m.Context)
		}
		out = append(out, r)
	}
	return out
}

// checkCRDs: the mcs-api CRDs are served in every member; v1alpha1-only members are flagged.
func checkCRDs(s *Snapshot) []Result {
	var out []Result
	for _, m := range s.Clusters {
		if m.State != snapshot.Reachable && m.State != snapshot.NoCRDs {
			continue
		}
		r := Result{Check: CheckCRDs, Cluster: m.ID, Object: "crd/" + mcsapi.ServiceExports + "." + mcsapi.Group}
		switch {
		case m.State == snapshot.NoCRDs || len(m.ServedVersions) == 0:
			r.Severity, r.Message = Fail, "the ServiceExport/ServiceImport CRDs are not installed: this cluster exports and imports nothing"
			r.Fix, r.Commands = "Install them:", []shell.Command{initCommand(m)}
		case !contains(m.ServedVersions, mcsapi.V1beta1):
			r.Severity = Warn
			r.Message = "serves only v1alpha1 (v0.1.0-era CRDs, as Karmada bundles): fields its schema lacks are not written there"
			r.Fix, r.Commands = "Upgrade to the v1beta1 CRDs unless Karmada needs these:", []shell.Command{initCommand(m)}
		default:
			r.Severity, r.Message = OK, "served: "+strings.Join(m.ServedVersions, ", ")
		}
		out = append(out, r)
	}
	return out
}

// checkClusterIDs: valid, unique, one per cluster, and what the cluster's ClusterProperty says.
func checkClusterIDs(s *Snapshot) []Result {
	var out []Result
	// claims are the members claiming each ID: by --contexts, or by their ClusterProperty.
	claims := map[string][]string{}
	byUID := map[string][]string{}
	sets := map[string][]string{}
	for _, m := range s.Clusters {
		claims[m.ID] = append(claims[m.ID], m.ID)
		if p, ok := m.ClusterProperties[PropertyClusterID]; ok && p != m.ID {
			claims[p] = append(claims[p], m.ID)
		}
		if m.SystemUID != "" {
			byUID[m.SystemUID] = append(byUID[m.SystemUID], m.ID)
		}
		if v, ok := m.ClusterProperties[PropertyClusterset]; ok {
			sets[v] = append(sets[v], m.ID)
		}
	}
	for _, m := range s.Clusters {
		r := Result{Check: CheckClusterID, Cluster: m.ID, Object: "context/" + m.Context, Severity: OK}
		prop, hasProp := m.ClusterProperties[PropertyClusterID]
		var problems []string
		fix := ""
		if errs := validation.IsDNS1123Label(m.ID); len(errs) > 0 {
			problems = append(problems, fmt.Sprintf("%q is not a valid RFC 1123 label: %s", m.ID, errs[0]))
			fix = fmt.Sprintf("Give context %q a valid ID in --contexts, as %q.", m.Context, m.Context+"=ID")
		}
		if hasProp && prop != m.ID {
			problems = append(problems, fmt.Sprintf("its ClusterProperty %s says %q, not %q", PropertyClusterID, prop, m.ID))
			fix = fmt.Sprintf("Use the cluster's own ID, %q in --contexts, or correct its ClusterProperty.", m.Context+"="+prop)
		}
		for _, id := range []string{m.ID, prop} {
			if others := without(claims[id], m.ID); id != "" && len(others) > 0 {
				problems = append(problems, fmt.Sprintf("ID %q is also claimed by %s", id, quoted(others)))
				fix = fmt.Sprintf("Give each cluster its own ID: correct the ClusterProperty %s (or --contexts) of %s.", PropertyClusterID, quoted(append([]string{m.ID}, others...)))
			}
			if !hasProp || prop == m.ID {
				break
			}
		}
		if same := without(byUID[m.SystemUID], m.ID); m.SystemUID != "" && len(same) > 0 {
			problems = append(problems, fmt.Sprintf("it is the same cluster as %s (kube-system has the same UID)", quoted(same)))
			fix = "List each cluster once in --contexts."
		}
		if len(problems) > 0 {
			r.Severity, r.Message, r.Fix = Fail, "cluster ID: "+strings.Join(problems, "; "), fix
		} else {
			r.Message = fmt.Sprintf("ID %q", m.ID)
			if hasProp {
				r.Message += ", as its ClusterProperty says"
			}
		}
		out = append(out, r)
	}
	if len(sets) > 1 {
		var parts []string
		for name, ids := range sets {
			sort.Strings(ids)
			parts = append(parts, fmt.Sprintf("%q in %s", name, quoted(ids)))
		}
		sort.Strings(parts)
		out = append(out, Result{Check: CheckClusterID, Object: "clusterproperty/" + PropertyClusterset, Severity: Fail,
			Message: "the members name different clustersets: " + strings.Join(parts, ", "),
			Fix:     "Make the " + PropertyClusterset + " ClusterProperty the same in every member, or leave out the clusters of another clusterset."})
	}
	return out
}

// checkClock warns when members' clocks are more than MaxClockSkew apart. The Date header has a
// one-second resolution, so only skews past a second are told, and past what the reads' round
// trips leave uncertain (on a loaded apiserver, a second or more).
func checkClock(s *Snapshot) []Result {
	var known []Cluster
	for _, m := range s.Clusters {
		if m.ClockOffset != nil {
			known = append(known, m)
		}
	}
	if len(known) < 2 {
		return nil
	}
	sort.SliceStable(known, func(i, j int) bool { return *known[i].ClockOffset < *known[j].ClockOffset })
	lo, hi := known[0], known[len(known)-1]
	skew := *hi.ClockOffset - *lo.ClockOffset
	r := Result{Check: CheckClock, Object: "clocks", Severity: OK,
		Message: fmt.Sprintf("members' clocks agree within %s (Date headers of %d members)", MaxClockSkew, len(known))}
	if skew > MaxClockSkew+hi.ClockError+lo.ClockError {
		r.Severity, r.Cluster = Warn, hi.ID
		r.Message = fmt.Sprintf("%q is %s ahead of %q: the oldest export can be picked wrongly between them", hi.ID, skew.Round(100*time.Millisecond), lo.ID)
		r.Fix = "Synchronise the members' clocks (NTP/chrony on the control-plane nodes)."
	}
	return []Result{r}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func without(ss []string, drop string) []string {
	var out []string
	for _, s := range ss {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

func quoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
