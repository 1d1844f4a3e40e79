// No build tag, as campaign_state_test.go: the final-state checker's own test runs with the unit
// tests too, so a checker that accepts anything fails `make test-unit`.

package e2e

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// objectsFor builds what a correct controller leaves in member m for svcs: the checker's own test
// starts from it and breaks one thing at a time. uid gives every object a distinct UID.
func objectsFor(m string, svcs []wantService, withExports bool) memberObjects {
	var o memberObjects
	n := 0
	uid := func() string { n++; return fmt.Sprintf("uid-%s-%d", m, n) }
	for _, s := range svcs {
		if src, ok := s.Exports[m]; ok && withExports {
			se := mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Name: s.Name}}
			if src == nil {
				se.Status.Conditions = []metav1.Condition{{Type: "Valid", Status: "False", Reason: "NoService"}}
			} else {
				se.Status.Conditions = []metav1.Condition{{Type: "Valid", Status: "True", Reason: "Valid"},
					{Type: "Ready", Status: "True", Reason: "Exported"}, {Type: "Conflict", Status: "False", Reason: "NoConflicts"}}
			}
			o.Exports = append(o.Exports, se)
		}
		exp := s.exporters()
		if len(exp) == 0 {
			continue
		}
		derived := "derived-" + s.Name
		si := mcsv1beta1.ServiceImport{
			ObjectMeta: metav1.ObjectMeta{Name: s.Name, UID: types.UID(uid()), Labels: map[string]string{lblManagedBy: managedValue},
				Annotations: map[string]string{annDerived: derived}},
			Spec: mcsv1beta1.ServiceImportSpec{Type: mcsv1beta1.ClusterSetIP, IPs: []string{"10.96.0.10"},
				Ports: []mcsv1beta1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: s.Port}}},
		}
		for _, c := range exp {
			si.Status.Clusters = append(si.Status.Clusters, mcsv1beta1.ClusterStatus{Cluster: c})
		}
		o.Imports = append(o.Imports, si)
		svc := corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: derived, UID: types.UID(uid()), Labels: map[string]string{lblManagedBy: managedValue},
				OwnerReferences: []metav1.OwnerReference{{Kind: "ServiceImport", Name: s.Name, UID: si.UID}}},
			Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
				Ports: []corev1.ServicePort{{Protocol: corev1.ProtocolTCP, Port: s.Port, TargetPort: intstr.FromInt32(s.Port)}}},
		}
		o.Services = append(o.Services, svc)
		for _, c := range exp {
			src := s.Exports[c]
			per := (len(src.IPs) + src.Slices - 1) / max(src.Slices, 1)
			for i := 0; i < src.Slices; i++ {
				proto, port := corev1.ProtocolTCP, s.TargetPort
				sl := discoveryv1.EndpointSlice{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", s.Name, c, i), UID: types.UID(uid()),
						Labels:          map[string]string{lblSliceManagedBy: managedValue, lblMCSService: s.Name, lblSourceCluster: c, lblKubeService: derived},
						OwnerReferences: []metav1.OwnerReference{{Kind: "Service", Name: derived, UID: svc.UID}}},
					Ports: []discoveryv1.EndpointPort{{Protocol: &proto, Port: &port}},
				}
				for j := i * per; j < min((i+1)*per, len(src.IPs)); j++ {
					sl.Endpoints = append(sl.Endpoints, discoveryv1.Endpoint{Addresses: []string{src.IPs[j]}})
				}
				o.Slices = append(o.Slices, sl)
			}
		}
	}
	return o
}

// TestCampaignChecker: the checker accepts exactly what a correct controller leaves, and reports
// each kind of damage a faulty one could leave behind.
func TestCampaignChecker(t *testing.T) {
	members := []string{"member1", "member2", "member3"}
	svcs := []wantService{
		{Name: "stable-a", Port: 80, TargetPort: 8080, Exports: map[string]*wantSource{
			"member1": {IPs: []string{"10.11.0.4", "10.11.0.5"}, Slices: 1},
			"member2": {IPs: []string{"10.12.0.7"}, Slices: 1}}},
		{Name: "churn-0", Port: 81, TargetPort: 8081, Exports: map[string]*wantSource{
			"member3": {IPs: []string{"10.13.0.2", "10.13.0.3", "10.13.0.9"}, Slices: 2},
			"member1": nil}},
		{Name: "churn-1", Port: 80, TargetPort: 8080, Exports: map[string]*wantSource{"member2": nil}},
	}
	observe := func(mutate func(m string, o *memberObjects)) []string {
		var got []string
		for _, m := range members {
			o := objectsFor(m, svcs, true)
			if mutate != nil {
				mutate(m, &o)
			}
			got = append(got, observedLines(m, o)...)
		}
		return got
	}
	want := expectedLines(members, svcs)
	if d := diffLines(want, observe(nil)); len(d) > 0 {
		t.Fatalf("a correct final state is reported as wrong:\n%s", strings.Join(d, "\n"))
	}
	// Per member 2 imports, 2 derived Services, 3 slice groups; 5 exports in all.
	if len(want) != 3*7+5 {
		t.Errorf("expected %d lines, got %d:\n%s", 3*7+5, len(want), strings.Join(want, "\n"))
	}
	slice := func(o *memberObjects, svc, src string) *discoveryv1.EndpointSlice {
		for i := range o.Slices {
			if o.Slices[i].Labels[lblMCSService] == svc && o.Slices[i].Labels[lblSourceCluster] == src {
				return &o.Slices[i]
			}
		}
		t.Fatalf("no slice %s from %s", svc, src)
		return nil
	}
	bad := map[string]func(m string, o *memberObjects){
		"a source's slices missing (an exporter taken as not exporting)": func(m string, o *memberObjects) {
			if m == "member3" {
				s := slice(o, "stable-a", "member2")
				s.Labels[lblSliceManagedBy] = "someone-else"
			}
		},
		"status.clusters without an exporter": func(m string, o *memberObjects) {
			if m == "member1" {
				o.Imports[0].Status.Clusters = o.Imports[0].Status.Clusters[:1]
			}
		},
		"a stale address": func(m string, o *memberObjects) {
			if m == "member2" {
				s := slice(o, "churn-0", "member3")
				s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.13.0.77"}})
			}
		},
		"a not-ready endpoint": func(m string, o *memberObjects) {
			if m == "member2" {
				f := false
				slice(o, "churn-0", "member3").Endpoints[0].Conditions.Ready = &f
			}
		},
		"a duplicate copy of a slice": func(m string, o *memberObjects) {
			if m == "member1" {
				d := slice(o, "stable-a", "member1").DeepCopy()
				d.Name += "-dup"
				d.Endpoints = nil
				o.Slices = append(o.Slices, *d)
			}
		},
		"a leftover slice of a service nobody exports": func(m string, o *memberObjects) {
			if m == "member2" {
				d := slice(o, "stable-a", "member1").DeepCopy()
				d.Labels[lblMCSService], d.Labels[lblKubeService] = "churn-1", "derived-churn-1"
				o.Slices = append(o.Slices, *d)
			}
		},
		"a leftover import of a service nobody exports": func(m string, o *memberObjects) {
			d := o.Imports[0].DeepCopy()
			d.Name = "churn-1"
			o.Imports = append(o.Imports, *d)
		},
		"an import taken over from its user (no managed-by label)": func(m string, o *memberObjects) {
			delete(o.Imports[1].Labels, lblManagedBy)
		},
		"import IPs that are not the derived Service's": func(m string, o *memberObjects) {
			o.Imports[0].Spec.IPs = []string{"10.96.3.3"}
		},
		"an old port on the import": func(m string, o *memberObjects) {
			if m == "member3" {
				o.Imports[1].Spec.Ports[0].Port = 80
			}
		},
		"an old port on the derived Service": func(m string, o *memberObjects) {
			if m == "member3" {
				o.Services[1].Spec.Ports[0].Port = 80
			}
		},
		"a derived Service owned by an import that is gone": func(m string, o *memberObjects) {
			o.Services[0].OwnerReferences[0].UID = "gone"
		},
		"a slice owned by a derived Service that is gone": func(m string, o *memberObjects) {
			o.Slices[0].OwnerReferences[0].UID = "gone"
		},
		"a slice feeding the wrong Service": func(m string, o *memberObjects) {
			o.Slices[0].Labels[lblKubeService] = "stable-a"
		},
		"old target port in a slice": func(m string, o *memberObjects) {
			p := int32(8080)
			slice(o, "churn-0", "member3").Ports[0].Port = &p
		},
		"a conflict on an export": func(m string, o *memberObjects) {
			if m == "member2" {
				o.Exports[0].Status.Conditions[2] = metav1.Condition{Type: "Conflict", Status: "True", Reason: "PortConflict"}
			}
		},
		"Ready and Conflict left on an invalid export": func(m string, o *memberObjects) {
			if m == "member1" {
				o.Exports[1].Status.Conditions = append(o.Exports[1].Status.Conditions, metav1.Condition{Type: "Ready", Status: "True", Reason: "Exported"})
			}
		},
		"no conditions on an export": func(m string, o *memberObjects) {
			if m == "member2" {
				o.Exports[1].Status.Conditions = nil
			}
		},
	}
	for name, mutate := range bad {
		if d := diffLines(want, observe(mutate)); len(d) == 0 {
			t.Errorf("%s: not reported", name)
		}
	}
	// And a wrong expectation against a correct state: member3 taken as not exporting churn-0.
	wrong := append([]wantService{}, svcs...)
	wrong[1] = wantService{Name: "churn-0", Port: 81, TargetPort: 8081, Exports: map[string]*wantSource{"member1": nil}}
	if d := diffLines(expectedLines(members, wrong), observe(nil)); len(d) == 0 {
		t.Error("a wrong expectation matched")
	}
}
