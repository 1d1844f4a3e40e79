package diagnose

import (
	"context"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// installedIdentity is the user name of the ServiceAccount `kubectl mcs install` gives sync in m
// ("" when there is none, or it cannot be read): where sync is installed, the permissions that
// matter are that identity's, not the ones of whoever runs diagnose.
func installedIdentity(ctx context.Context, m *clusterset.Connection) string {
	sa, err := m.Client.CoreV1().ServiceAccounts(names.SystemNamespace).Get(ctx, syncApp, metav1.GetOptions{})
	if err != nil || !names.IsManaged(sa.Labels) {
		return ""
	}
	return "system:serviceaccount:" + names.SystemNamespace + ":" + syncApp
}

// accessReviews asks, verb by verb and concurrently, whether sync may do what it does in m, in ns
// or cluster-wide when ns is "": as the installed sync's ServiceAccount (a SubjectAccessReview),
// else, or when the current user may not ask for another, as the current user.
func accessReviews(ctx context.Context, m *clusterset.Connection, ns string) (answers []AccessAnswer, as, errMsg string) {
	as = installedIdentity(ctx, m)
	answers, err := reviews(ctx, m, ns, as, installedLease(ctx, m))
	if as != "" && apierrors.IsForbidden(err) {
		as = ""
		answers, err = reviews(ctx, m, ns, "", false)
	}
	if err != nil {
		return nil, as, err.Error()
	}
	return answers, as, ""
}

// installedLease says whether an installed sync runs in m, and so holds its Lease there.
func installedLease(ctx context.Context, m *clusterset.Connection) bool {
	d, err := m.Client.AppsV1().Deployments(names.SystemNamespace).Get(ctx, syncApp, metav1.GetOptions{})
	return err == nil && names.IsManaged(d.Labels)
}

// reviews asks about every verb of SyncAccess as user ("": the current user); the first error
// (by text) when any could not be asked. The installed identity is asked about the Lease where
// its sync runs (lease), in the namespace install gives it, and nowhere else: a one-shot or a
// hand-run --leader-elect may hold its Lease in any namespace, and is asked in ns.
func reviews(ctx context.Context, m *clusterset.Connection, ns, user string, lease bool) ([]AccessAnswer, error) {
	var answers []AccessAnswer
	for _, a := range SyncAccess {
		if a.LeaderElection && user != "" && !lease {
			continue
		}
		for _, v := range a.Verbs {
			q := AccessAnswer{Access: a, Verb: v}
			switch {
			case a.LeaderElection && user != "":
				q.Namespace = names.SystemNamespace
			case !a.ClusterScoped:
				q.Namespace = ns
			}
			answers = append(answers, q)
		}
	}
	// A ServiceAccount's token authenticates with these groups; RBAC may bind any of them.
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + names.SystemNamespace, "system:authenticated"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := map[string]error{}
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := &answers[i]
			attrs := &authorizationv1.ResourceAttributes{Namespace: a.Namespace, Verb: a.Verb,
				Group: a.Group, Resource: a.Resource, Subresource: a.Subresource, Name: a.Name}
			var st authorizationv1.SubjectAccessReviewStatus
			var err error
			if user == "" {
				var got *authorizationv1.SelfSubjectAccessReview
				got, err = m.Client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
					&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}}, metav1.CreateOptions{})
				if err == nil {
					st = got.Status
				}
			} else {
				var got *authorizationv1.SubjectAccessReview
				got, err = m.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx,
					&authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: attrs, User: user, Groups: groups}}, metav1.CreateOptions{})
				if err == nil {
					st = got.Status
				}
			}
			if err != nil {
				mu.Lock()
				errs[err.Error()] = err
				mu.Unlock()
				return
			}
			a.Allowed, a.Reason = st.Allowed, st.Reason
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		first := sets.List(sets.KeySet(errs))[0]
		return nil, errs[first]
	}
	return answers, nil
}
