package synccmd

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
)

func TestLeaseMember(t *testing.T) {
	client := fake.NewClientset()
	ms := []*clusterset.Connection{
		{Ref: clusterset.Ref{Context: "ctx1", ID: "member1"}, Client: client, Err: errors.New("unreachable: connection refused")},
		{Ref: clusterset.Ref{Context: "ctx2", ID: "member2"}, Client: client},
		{Ref: clusterset.Ref{Context: "ctx3", ID: "member3"}, Err: errors.New(`invalid configuration: no server found for cluster "c3"`)},
	}
	cases := []struct {
		flag, wantID, wantErr string
	}{
		{flag: "", wantID: "member1"}, // the first of --contexts even though it is unreachable
		{flag: "ctx2", wantID: "member2"},
		{flag: "member2", wantErr: `--leader-elect-context "member2" is not one of --contexts (ctx1,ctx2,ctx3)`},
		{flag: "ctx3", wantErr: `--leader-elect: cluster "member3" (context "ctx3") cannot hold the Lease: invalid configuration`},
	}
	for _, c := range cases {
		o := &Options{LeaderContext: c.flag, members: ms}
		m, err := o.leaseMember()
		if c.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("--leader-elect-context=%q: error %v, want one line starting with %q", c.flag, err, c.wantErr)
			}
			continue
		}
		if err != nil || m.ID != c.wantID {
			t.Errorf("--leader-elect-context=%q: %v, %v; want %s", c.flag, m, err, c.wantID)
		}
	}
}

func TestLocal(t *testing.T) {
	ms := []*clusterset.Connection{
		{Ref: clusterset.Ref{Context: "ctx1", ID: "member1"}, Client: fake.NewClientset()},
		{Ref: clusterset.Ref{Context: "ctx2", ID: "member2"}, Client: fake.NewClientset()},
	}
	cases := []struct {
		local, lease, wantLease, wantErr string
	}{
		{local: "ctx2", wantLease: "member2"}, // the Lease goes where the sync writes
		{local: "ctx2", lease: "ctx2", wantLease: "member2"},
		{local: "ctx2", lease: "ctx1", wantErr: `--leader-elect-context "ctx1": a sync with --local=ctx2 writes only there, its Lease too`},
		{local: "member2", wantErr: `--local "member2" is not one of --contexts (ctx1,ctx2)`},
	}
	for _, c := range cases {
		o := &Options{Local: c.local, LeaderContext: c.lease, members: ms}
		err := o.validateLocal()
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("--local=%s --leader-elect-context=%s: error %v, want %q", c.local, c.lease, err, c.wantErr)
			}
			continue
		}
		m, lerr := o.leaseMember()
		if err != nil || lerr != nil || m.ID != c.wantLease {
			t.Errorf("--local=%s --leader-elect-context=%s: %v, %v, %v; want the Lease in %s", c.local, c.lease, err, lerr, m, c.wantLease)
		}
	}
}
