package engine

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/snapshot"
)

func cloneObs(o Observed) Observed {
	out := o
	out.Clusters = make([]ObservedCluster, len(o.Clusters))
	for i, c := range o.Clusters {
		n := c
		n.Namespaces = append([]string(nil), c.Namespaces...)
		n.ServiceExports, n.Services, n.EndpointSlices, n.ServiceImports = nil, nil, nil, nil
		for _, x := range c.ServiceExports {
			n.ServiceExports = append(n.ServiceExports, x.DeepCopy())
		}
		for _, x := range c.Services {
			n.Services = append(n.Services, x.DeepCopy())
		}
		for _, x := range c.EndpointSlices {
			n.EndpointSlices = append(n.EndpointSlices, x.DeepCopy())
		}
		for _, x := range c.ServiceImports {
			n.ServiceImports = append(n.ServiceImports, x.DeepCopy())
		}
		out.Clusters[i] = n
	}
	return out
}

func summary(acts []Action) []string {
	var out []string
	for _, a := range acts {
		out = append(out, fmt.Sprintf("%s %s %s %s/%s", a.Cluster, a.Verb, a.Kind, a.Namespace, a.Name))
	}
	return out
}

// twoExporters: m1 and m2 export demo/serve with one slice each, m3 only imports.
func twoExporters() Observed {
	return Observed{Now: now, Clusters: []ObservedCluster{
		member("m1", mkService("demo", "serve"), mkExport("demo", "serve", 0), mkSlice("demo", "serve", "serve-a", "10.1.0.1")),
		member("m2", mkService("demo", "serve"), mkExport("demo", "serve", 1), mkSlice("demo", "serve", "serve-b", "10.2.0.1", "10.2.0.2")),
		member("m3"),
	}}
}

func TestPlanFirstPassAndConvergence(t *testing.T) {
	obs := twoExporters()
	acts := Plan(obs, Compute(obs))
	s1a, s2b := names.EndpointSliceName("serve", "m1", "serve-a"), names.EndpointSliceName("serve", "m2", "serve-b")
	var want []string
	for _, c := range []string{"m1", "m2", "m3"} {
		want = append(want,
			c+" create ServiceImport demo/serve", c+" status ServiceImport demo/serve",
			c+" create Service demo/derived-serve")
		for _, s := range sortedCopy([]string{s1a, s2b}) {
			want = append(want, c+" create EndpointSlice demo/"+s)
		}
		if c != "m3" {
			want = append(want, c+" status ServiceExport demo/serve")
		}
	}
	if got := summary(acts); !reflect.DeepEqual(got, want) {
		t.Fatalf("first pass\n got %q\nwant %q", got, want)
	}

	passes, left := converge(&obs, 5)
	if len(left) != 0 || passes > 3 {
		t.Fatalf("not converged after %d passes: %q", passes, summary(left))
	}
	d := Compute(obs)
	for _, c := range obs.Clusters {
		var derived *corev1.Service
		var imp *mcsv1beta1.ServiceImport
		for _, s := range c.Services {
			if s.Name == "derived-serve" {
				derived = s
			}
		}
		for _, i := range c.ServiceImports {
			imp = i
		}
		if derived == nil || imp == nil {
			t.Fatalf("%s: derived service or import missing", c.ID)
		}
		if !reflect.DeepEqual(imp.Spec.IPs, []string{derived.Spec.ClusterIP}) {
			t.Errorf("%s: import ips %v, derived clusterIP %s", c.ID, imp.Spec.IPs, derived.Spec.ClusterIP)
		}
		if len(derived.OwnerReferences) != 1 || derived.OwnerReferences[0].UID != imp.UID {
			t.Errorf("%s: derived owner %v, want import %s", c.ID, derived.OwnerReferences, imp.UID)
		}
		for _, e := range c.ServiceExports {
			if r := findCond(e.Status.Conditions, mcsv1beta1.ServiceExportConditionReady); r == nil || r.Status != metav1.ConditionTrue {
				t.Errorf("%s: Ready %+v after convergence", c.ID, r)
			}
		}
	}
	if len(d.Conflicts) != 0 {
		t.Errorf("unexpected conflicts %+v", d.Conflicts)
	}
}

func TestPlanIgnoresApiserverNoise(t *testing.T) {
	obs := twoExporters()
	if _, left := converge(&obs, 5); len(left) != 0 {
		t.Fatal("did not converge")
	}
	for i := range obs.Clusters {
		c := &obs.Clusters[i]
		noise := func(m *metav1.ObjectMeta) {
			m.ResourceVersion = "999"
			m.Generation = 7
			if m.Labels == nil {
				m.Labels = map[string]string{}
			}
			m.Labels["someone.else/label"] = "x"
			m.ManagedFields = append(m.ManagedFields, metav1.ManagedFieldsEntry{Manager: "kubectl-edit",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:someone.else/label":{}}}}`)}})
		}
		for _, o := range c.ServiceImports {
			noise(&o.ObjectMeta)
		}
		for _, o := range c.Services {
			if names.IsManaged(o.Labels) {
				noise(&o.ObjectMeta)
				o.Spec.Ports[0].NodePort = 0
				o.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicySingleStack)
			}
		}
		for _, o := range c.EndpointSlices {
			noise(&o.ObjectMeta)
		}
		for _, o := range c.ServiceExports {
			o.Status.Conditions = append(o.Status.Conditions, metav1.Condition{Type: "SomeoneElse", Status: "True", Reason: "X"})
		}
	}
	if acts := Plan(obs, Compute(obs)); len(acts) != 0 {
		t.Errorf("steady state with foreign fields writes: %q", summary(acts))
	}
}

func TestPlanDefaultsDoNotCauseWrites(t *testing.T) {
	// Hand-built "as read back" objects: protocol and affinity defaulted, clusterIP allocated.
	svc := mkService("demo", "serve", corev1.ServicePort{Name: "http", Port: 80}) // protocol unset at the source
	svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
	obs := Observed{Now: now, Clusters: []ObservedCluster{member("m1", svc, mkExport("demo", "serve", 0))}}
	if _, left := converge(&obs, 5); len(left) != 0 {
		t.Fatalf("did not converge: %q", summary(left))
	}
	// The converged observation differs from desired exactly by apiserver defaults.
	var o *corev1.Service
	for _, s := range obs.Clusters[0].Services {
		if s.Name == "derived-serve" {
			o = s
		}
	}
	want := findService(Compute(obs).Clusters["m1"], "demo", "derived-serve")
	if o.Spec.SessionAffinityConfig == nil || want.Spec.SessionAffinityConfig != nil || o.Spec.ClusterIP == "" ||
		want.Spec.ClusterIP != "" || o.Spec.InternalTrafficPolicy == nil || want.Spec.InternalTrafficPolicy != nil ||
		o.Spec.Ports[0].Protocol != "TCP" || len(o.Spec.ClusterIPs) == 0 {
		t.Fatalf("test premise: observed %+v\ndesired %+v", o.Spec, want.Spec)
	}
	if acts := Plan(obs, Compute(obs)); len(acts) != 0 {
		t.Errorf("defaults caused writes: %q", summary(acts))
	}
}

func TestPlanDeletes(t *testing.T) {
	obs := twoExporters()
	if _, left := converge(&obs, 5); len(left) != 0 {
		t.Fatal("did not converge")
	}
	s2b := names.EndpointSliceName("serve", "m2", "serve-b")

	// m2 not read (down since start, not synced, outside --contexts): not "not exporting".
	unread := cloneObs(obs)
	unread.Clusters = []ObservedCluster{unread.Clusters[0], unread.Clusters[2]}
	if acts := Plan(unread, Compute(unread)); len(acts) != 0 {
		t.Errorf("m2 not read: actions %q, want none", summary(acts))
	}

	oneGone := cloneObs(obs)
	oneGone.Clusters[1].ServiceExports = nil
	d := Compute(oneGone)
	var deletes []string
	for _, a := range Plan(oneGone, d) {
		if a.Verb == VerbDelete {
			deletes = append(deletes, a.Cluster+" "+a.Kind+" "+a.Name)
		}
	}
	want := []string{"m1 EndpointSlice " + s2b, "m2 EndpointSlice " + s2b, "m3 EndpointSlice " + s2b}
	if !reflect.DeepEqual(deletes, want) {
		t.Errorf("one cluster unexports: deletes %q, want %q", deletes, want)
	}

	allGone := cloneObs(obs)
	allGone.Clusters[0].ServiceExports, allGone.Clusters[1].ServiceExports = nil, nil
	acts := Plan(allGone, Compute(allGone))
	perCluster := map[string]int{}
	for _, a := range acts {
		if a.Verb != VerbDelete || a.Object != nil {
			t.Errorf("unexport all: unexpected %+v", a)
		}
		perCluster[a.Cluster]++
	}
	// import + derived service + two slices in each of three clusters
	if !reflect.DeepEqual(perCluster, map[string]int{"m1": 4, "m2": 4, "m3": 4}) {
		t.Errorf("unexport all: deletes per cluster %v (%q)", perCluster, summary(acts))
	}
	apply(&allGone, acts)
	for _, c := range allGone.Clusters {
		if len(c.ServiceImports) != 0 || len(c.Services) != 1 && c.ID != "m3" || len(c.EndpointSlices) != 1 && c.ID != "m3" {
			t.Errorf("%s after unexport: %d imports, %d services, %d slices", c.ID, len(c.ServiceImports), len(c.Services), len(c.EndpointSlices))
		}
	}
}

func TestPlanNeverTouchesUnmanaged(t *testing.T) {
	unmanagedImp := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "old",
		Annotations: map[string]string{names.DerivedServiceAnnotation: "derived-old"}}}
	unmanagedSvc := mkService("demo", "derived-old")
	unmanagedSvc.Labels = map[string]string{mcsv1beta1.LabelServiceName: "old"}
	unmanagedSlice := mkSlice("demo", "derived-old", "x", "10.0.0.1")
	unmanagedSlice.Labels[mcsv1beta1.LabelSourceCluster] = "m9"
	// Managed by another kubectl-mcs command, not by sync: no sync mark, so not collected.
	exposeImp := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "karmada-made",
		Labels: map[string]string{names.ManagedByLabel: names.ManagedByValue}}}
	// Stale and ours: must go.
	staleImp := &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "gone",
		Labels:      map[string]string{names.ManagedByLabel: names.ManagedByValue},
		Annotations: map[string]string{names.DerivedServiceAnnotation: "derived-gone"}}}
	obs := Observed{Now: now, Clusters: []ObservedCluster{member("m1", unmanagedImp, unmanagedSvc, unmanagedSlice, exposeImp, staleImp)}}
	acts := Plan(obs, Compute(obs))
	if got, want := summary(acts), []string{"m1 delete ServiceImport demo/gone"}; !reflect.DeepEqual(got, want) {
		t.Errorf("actions %q, want %q", got, want)
	}

	// Desired objects whose names are taken by unmanaged ones are left alone as well.
	d := Desired{Clusters: map[string]*ClusterDesired{"m1": {
		ServiceImports: []*mcsv1beta1.ServiceImport{{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "old"}}},
		Services:       []*corev1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "derived-old"}}},
		EndpointSlices: []*discoveryv1.EndpointSlice{{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "x"}}},
	}}}
	if acts := Plan(obs, d); len(acts) != 1 || acts[0].Name != "gone" {
		t.Errorf("actions on unmanaged objects: %q", summary(acts))
	}
}

func TestPlanExportConditions(t *testing.T) {
	obs := Observed{Now: now, Clusters: []ObservedCluster{member("m1", mkService("demo", "serve"), mkExport("demo", "serve", 0))}}
	if _, left := converge(&obs, 5); len(left) != 0 {
		t.Fatal("did not converge")
	}
	exp := obs.Clusters[0].ServiceExports[0]
	valid := findCond(exp.Status.Conditions, mcsv1beta1.ServiceExportConditionValid)
	if valid.LastTransitionTime != now {
		t.Fatalf("first Valid transition %v, want Now", valid.LastTransitionTime)
	}

	// Only the transition time differs: no write.
	old := metav1.NewTime(t0)
	for i := range exp.Status.Conditions {
		exp.Status.Conditions[i].LastTransitionTime = old
	}
	later := obs
	later.Now = metav1.NewTime(now.Add(3600e9))
	if acts := Plan(later, Compute(later)); len(acts) != 0 {
		t.Fatalf("transition time alone caused writes: %q", summary(acts))
	}

	// The Service turns ExternalName: Valid flips (new time), Ready/Conflict are dropped,
	// a foreign condition survives.
	exp.Status.Conditions = append(exp.Status.Conditions, metav1.Condition{Type: "Other", Status: "True", Reason: "X", LastTransitionTime: old})
	for _, s := range later.Clusters[0].Services {
		if s.Name == "serve" {
			s.Spec.Type = corev1.ServiceTypeExternalName
		}
	}
	var status *Action
	for _, a := range Plan(later, Compute(later)) {
		if a.Kind == snapshot.KindServiceExport {
			status = &a
		}
	}
	if status == nil {
		t.Fatal("no status action after the Service became invalid")
	}
	conds := status.Object.(*mcsv1beta1.ServiceExport).Status.Conditions
	v := findCond(conds, mcsv1beta1.ServiceExportConditionValid)
	if v == nil || v.Status != metav1.ConditionFalse || v.LastTransitionTime != later.Now || v.ObservedGeneration != 1 {
		t.Errorf("Valid %+v, want False at the new Now", v)
	}
	if findCond(conds, mcsv1beta1.ServiceExportConditionReady) != nil || findCond(conds, "Other") == nil {
		t.Errorf("conditions %+v: want Ready dropped and Other kept", conds)
	}

	// Status unchanged but reason changed: keep the old transition time.
	exp2 := mkExport("demo", "serve", 0)
	exp2.Status.Conditions = []metav1.Condition{{Type: "Valid", Status: "False", Reason: "NoService", LastTransitionTime: old, ObservedGeneration: 1}}
	got := resolveConditions(exp2, now, []metav1.Condition{{Type: "Valid", Status: "False", Reason: "InvalidServiceType"}})
	if got[0].LastTransitionTime != old {
		t.Errorf("transition time %v, want kept %v", got[0].LastTransitionTime, old)
	}
}

func TestPlanDropsLabelsWeSetEarlier(t *testing.T) {
	obs := Observed{Now: now, Clusters: []ObservedCluster{member("m1", mkService("demo", "serve"), mkExport("demo", "serve", 0))}}
	obs.Clusters[0].ServiceExports[0].Spec.ExportedLabels = map[string]string{"tier": "web"}
	if _, left := converge(&obs, 5); len(left) != 0 {
		t.Fatal("did not converge")
	}
	imp := obs.Clusters[0].ServiceImports[0]
	if imp.Labels["tier"] != "web" {
		t.Fatalf("exported label missing: %v", imp.Labels)
	}
	obs.Clusters[0].ServiceExports[0].Spec.ExportedLabels = nil
	if acts := Plan(obs, Compute(obs)); len(acts) != 0 {
		t.Errorf("without managedFields a leftover label is somebody else's: %q", summary(acts))
	}
	imp.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: names.FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:tier":{},"f:app.kubernetes.io/managed-by":{}}},"f:spec":{"f:type":{}}}`)}}}
	acts := Plan(obs, Compute(obs))
	if got := summary(acts); !reflect.DeepEqual(got, []string{"m1 update ServiceImport demo/serve"}) {
		t.Errorf("actions %q, want an update of the import", got)
	}
}

func TestPlanHeadlessSwitchReplacesService(t *testing.T) {
	obs := Observed{Now: now, Clusters: []ObservedCluster{member("m1", mkService("demo", "serve"), mkExport("demo", "serve", 0))}}
	if _, left := converge(&obs, 5); len(left) != 0 {
		t.Fatal("did not converge")
	}
	for _, s := range obs.Clusters[0].Services {
		if s.Name == "serve" {
			s.Spec.ClusterIP = corev1.ClusterIPNone
		}
	}
	var got []string
	for _, a := range Plan(obs, Compute(obs)) {
		if a.Kind != snapshot.KindServiceExport {
			got = append(got, a.Verb+" "+a.Kind+" "+a.Name)
		}
	}
	want := []string{"update ServiceImport serve", "delete Service derived-serve", "create Service derived-serve"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("actions %q, want %q", got, want)
	}
}
