package member

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestListAllPagesAndRestartsOnExpiredToken(t *testing.T) {
	var calls []metav1.ListOptions
	expired := false
	got, err := listAll(context.Background(), 2, metav1.ListOptions{LabelSelector: "a=b"}, func(_ context.Context, o metav1.ListOptions) ([]int, string, error) {
		calls = append(calls, o)
		switch {
		case o.Continue == "" && o.Limit == 2:
			return []int{1, 2}, "page2", nil
		case o.Continue == "page2" && !expired:
			expired = true
			return nil, "", apierrors.NewResourceExpired("too old")
		case o.Limit == 0:
			return []int{1, 2, 3}, "", nil
		}
		t.Fatalf("unexpected call %+v", o)
		return nil, "", nil
	})
	if err != nil || len(got) != 3 || got[2] != 3 {
		t.Fatalf("got %v, %v", got, err)
	}
	if len(calls) != 3 || calls[0].LabelSelector != "a=b" || calls[2].LabelSelector != "a=b" || calls[2].Continue != "" {
		t.Errorf("calls %+v", calls)
	}
}
