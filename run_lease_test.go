package jobstore_test

import (
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

// leasePoll is how often a test looks at Run.Lease for a renewal.
const leasePoll = 10 * time.Millisecond

// Run.Lease reports the lease the Run was started with and when it was last
// renewed: the time moves with each renewal (every third of the lease), and
// no longer once the Run is closed.
func TestRun_LeaseReportsItsPeriodAndEachRenewal(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []jobstore.StartOption
		want time.Duration
	}{
		{"default", nil, jobstore.DefaultLease},
		{"WithLease", []jobstore.StartOption{jobstore.WithLease(600 * time.Millisecond)}, 600 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := time.Now()
			r, err := jobstore.Start(newJob(t, "j"), tc.opts...)
			require.NoError(t, err)
			t.Cleanup(func() { _ = r.Close() })
			period, claimed := r.Lease()
			require.Equal(t, tc.want, period)
			require.False(t, claimed.Before(before), "renewed before Start began")
			require.False(t, claimed.After(time.Now()), "renewed in the future")
			if tc.want == jobstore.DefaultLease {
				return // a renewal is 30 s away
			}
			waitFor(t, "a renewal", 10*period, func() bool {
				_, renewed := r.Lease()
				return renewed.After(claimed)
			})
			require.NoError(t, r.Close())
			_, last := r.Lease()
			time.Sleep(period / 2) // a renewal would have come by now
			_, after := r.Lease()
			require.Equal(t, last, after, "renewed after Close")
		})
	}
}

// waitFor polls cond every leasePoll until it holds, failing after limit.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(leasePoll)
	}
}
