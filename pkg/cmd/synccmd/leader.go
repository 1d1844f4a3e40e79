package synccmd

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/process"
)

// validateLocal checks --local: one of --contexts, and the Lease's member when both are given
// (a sync for one member writes nowhere else).
func (o *Options) validateLocal() error {
	if o.Local == "" {
		return nil
	}
	if o.PrintManifests {
		return errors.New("--local goes with a sync, not with --print-manifests (kubectl mcs install --mode=per-member runs one in every member)")
	}
	if m := o.member(o.Local); m == nil {
		return fmt.Errorf("--local %q is not one of --contexts (%s)", o.Local, strings.Join(o.contexts(), ","))
	}
	if o.LeaderContext != "" && o.LeaderContext != o.Local {
		return fmt.Errorf("--leader-elect-context %q: a sync with --local=%s writes only there, its Lease too", o.LeaderContext, o.Local)
	}
	return nil
}

// member is the member of context ctx, nil when it is not one of --contexts.
func (o *Options) member(ctx string) *clusterset.Connection {
	for _, m := range o.members {
		if m.Context == ctx {
			return m
		}
	}
	return nil
}

func (o *Options) contexts() []string {
	out := make([]string, len(o.members))
	for i, m := range o.members {
		out[i] = m.Context
	}
	return out
}

// leaseMember is the member that holds the Lease: --leader-elect-context, else --local, else the
// first of --contexts. It is fixed, reachable or not, so that replicas started while it is down never
// elect one leader each in different clusters.
func (o *Options) leaseMember() (*clusterset.Connection, error) {
	if len(o.members) == 0 {
		return nil, errors.New("--leader-elect: the clusterset is empty")
	}
	holder := o.members[0]
	if want := cmp.Or(o.LeaderContext, o.Local); want != "" {
		if holder = o.member(want); holder == nil {
			return nil, fmt.Errorf("--leader-elect-context %q is not one of --contexts (%s)", want, strings.Join(o.contexts(), ","))
		}
	}
	if holder.Client == nil {
		return nil, fmt.Errorf("--leader-elect: cluster %q (context %q) cannot hold the Lease: %v", holder.ID, holder.Context, holder.Err)
	}
	return holder, nil
}

// newElector returns the election's state holder, nil without --leader-elect.
func (o *Options) newElector() (*process.Elector, error) {
	if !o.LeaderElect {
		return nil, nil
	}
	m, err := o.leaseMember()
	if err != nil {
		return nil, err
	}
	return process.NewElector(m), nil
}
