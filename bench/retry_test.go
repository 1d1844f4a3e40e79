package main

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A replay write the apiserver timed out is made again, and told so; any other failure ends it.
func TestRetryTransient(t *testing.T) {
	gr := schema.GroupResource{Resource: "services"}
	var agains []bool
	err := retryTransient(context.Background(), func(again bool) error {
		agains = append(agains, again)
		if len(agains) < 2 {
			return apierrors.NewTimeoutError("request did not complete", 0)
		}
		return nil
	})
	if err != nil || len(agains) != 2 || agains[0] || !agains[1] {
		t.Fatalf("a timeout then success: err %v, attempts (again?) %v; want nil, [false true]", err, agains)
	}
	calls := 0
	forbidden := apierrors.NewForbidden(gr, "x", errors.New("no"))
	if err := retryTransient(context.Background(), func(bool) error { calls++; return forbidden }); !apierrors.IsForbidden(err) || calls != 1 {
		t.Fatalf("Forbidden: err %v after %d calls; want it after 1", err, calls)
	}
}
