package synccmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/process"
)

// leaseMember is the member that holds the Lease: --leader-elect-context, else the first of
// --contexts. It is fixed, reachable or not, so that replicas started while it is down never
// elect one leader each in different clusters.
func (o *Options) leaseMember() (*clusterset.Connection, error) {
	if len(o.members) == 0 {
		return nil, errors.New("--leader-elect: the clusterset is empty")
	}
	holder := o.members[0]
	if o.LeaderContext != "" {
		holder = nil
		ctxs := make([]string, 0, len(o.members))
		for _, m := range o.members {
			ctxs = append(ctxs, m.Context)
			if m.Context == o.LeaderContext {
				holder = m
			}
		}
		if holder == nil {
			return nil, fmt.Errorf("--leader-elect-context %q is not one of --contexts (%s)", o.LeaderContext, strings.Join(ctxs, ","))
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
