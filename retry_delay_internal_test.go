package jobstore

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Doubling a delay near the largest Duration must stop at the cap, not wrap
// negative (rand.N panics on it).
func TestRetryDelay_NeverPassesTheCapNorWraps(t *testing.T) {
	tests := []struct {
		name string
		spec JobSpec
	}{
		{"huge backoff, largest cap", JobSpec{Backoff: 5e18, MaxBackoff: math.MaxInt64}},
		{"huge backoff, default cap", JobSpec{Backoff: 5e18}},
		{"one hour, ten hours", JobSpec{Backoff: time.Hour, MaxBackoff: 10 * time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := max(tt.spec.MaxBackoff, tt.spec.Backoff)
			for n := 1; n <= 70; n++ {
				d := retryDelay(tt.spec, n)
				assert.GreaterOrEqual(t, d, tt.spec.Backoff/2, "retry %d", n)
				assert.LessOrEqual(t, d, limit, "retry %d", n)
			}
		})
	}
}
