package synccmd

import "testing"

func TestHeapLimit(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want int64
	}{
		{map[string]string{"KUBECTL_MCS_MEMORY_LIMIT": "536870912"}, 483183819},
		{map[string]string{"KUBECTL_MCS_MEMORY_LIMIT": "536870912", "GOMEMLIMIT": "100MiB"}, 0},
		{map[string]string{"KUBECTL_MCS_MEMORY_LIMIT": "512Mi"}, 0}, // resourceFieldRef gives bytes; anything else is not ours
		{map[string]string{"KUBECTL_MCS_MEMORY_LIMIT": "0"}, 0},
		{map[string]string{}, 0},
	} {
		if got := heapLimit(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("heapLimit(%v) = %d, want %d", c.env, got, c.want)
		}
	}
}
