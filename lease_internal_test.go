package jobstore

import (
	"strconv"
	"testing"
	"time"
)

// A lease renewed every lease/3 is never judged expired, whatever the
// observer's polling phase; one that stops is judged expired exactly once a
// whole lease has passed on the observer's clock since it last changed.
func TestLeaseObserver_RenewedNeverExpiresStoppedExpiresAfterOneLease(t *testing.T) {
	const lease = 900 * time.Millisecond
	for _, poll := range []time.Duration{7 * time.Millisecond, 100 * time.Millisecond, 299 * time.Millisecond, 450 * time.Millisecond} {
		t.Run("poll="+poll.String(), func(t *testing.T) {
			base := time.Unix(1000, 0)
			o := leaseObserver{lease: lease}
			value := func(at time.Duration) string { // the renewer writes at 0, L/3, 2L/3, ...
				return strconv.FormatInt(int64(at/(lease/renewDivisor)), 10)
			}
			const renewFor = 10 * lease
			var at time.Duration
			for ; at < renewFor; at += poll {
				if got := o.observe(value(at), base.Add(at)); got == leaseExpired {
					t.Fatalf("a renewed lease was judged expired at %v", at)
				}
			}
			last := value(renewFor - 1) // renewal stops: the content stays
			var expiredAt time.Duration
			for ; ; at += poll {
				if o.observe(last, base.Add(at)) == leaseExpired {
					expiredAt = at
					break
				}
			}
			changedAt := o.since.Sub(base)
			if expiredAt-changedAt < lease {
				t.Fatalf("expired %v after the last change seen, less than a lease", expiredAt-changedAt)
			}
			if expiredAt-changedAt >= lease+poll {
				t.Fatalf("expired %v after the last change seen, more than a lease and a poll", expiredAt-changedAt)
			}
		})
	}
}

func TestLeaseObserver_FirstLookNeverExpires(t *testing.T) {
	o := leaseObserver{lease: time.Second}
	if got := o.observe("1", time.Unix(0, 0)); got != leaseFirst {
		t.Fatalf("first look: %v", got)
	}
	if got := o.observe("1", time.Unix(0, 0).Add(time.Second-1)); got != leaseSame {
		t.Fatalf("just under a lease: %v", got)
	}
	if got := o.observe("2", time.Unix(0, 0).Add(time.Hour)); got != leaseChanged {
		t.Fatalf("changed: %v", got)
	}
	if got := o.observe("2", time.Unix(0, 0).Add(time.Hour+time.Second)); got != leaseExpired {
		t.Fatalf("a lease after the change: %v", got)
	}
}
