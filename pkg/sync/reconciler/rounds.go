package reconciler

// Rounds: the writes of one round, made concurrently, and what came of them.

import (
	"context"
	"sort"
	"sync"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/sync/engine"
)

// runRound executes one round's writes and takes their outcome into s.
func (r *Reconciler) runRound(ctx context.Context, s *syncFailures, obs engine.Observed, perCluster [][]engine.Action) []failed {
	fs := r.executeRound(ctx, s.k, obs, perCluster)
	var attempted []engine.Action
	for _, as := range perCluster {
		attempted = append(attempted, as...)
	}
	s.add(attempted, fs)
	r.countFailures(fs)
	return fs
}

// executeRound runs the actions of a round: those on one object in the plan's order (a delete
// before the create that replaces it, an update before the status), everything else concurrently,
// in every cluster at once. The changes are recorded in the plan's order.
func (r *Reconciler) executeRound(ctx context.Context, k key, obs engine.Observed, perCluster [][]engine.Action) []failed {
	var mu sync.Mutex
	var errs []failed
	var wg sync.WaitGroup
	var all []engine.Action
	for _, actions := range perCluster {
		all = append(all, actions...)
	}
	done := make([]bool, len(all))
	for _, chain := range chainsByObject(all) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, i := range chain {
				if err := r.execute(ctx, obs, all[i]); err != nil {
					mu.Lock()
					errs = append(errs, failed{action: all[i], err: err})
					mu.Unlock()
					return
				}
				done[i] = true
			}
		}()
	}
	wg.Wait()
	for i, a := range all {
		if done[i] {
			r.recordChanges(k, []engine.Action{a})
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].err.Error() < errs[j].err.Error() })
	return errs
}

// chainsByObject groups the indexes of actions by the object they write (cluster, kind,
// namespace, name), each group in the actions' order, the groups in the order of their first.
func chainsByObject(actions []engine.Action) [][]int {
	var out [][]int
	at := map[[4]string]int{}
	for i, a := range actions {
		k := [4]string{a.Cluster, a.Kind, a.Namespace, a.Name}
		if j, ok := at[k]; ok {
			out[j] = append(out[j], i)
			continue
		}
		at[k] = len(out)
		out = append(out, []int{i})
	}
	return out
}
