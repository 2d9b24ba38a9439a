package jobstore_test

import (
	"sync"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/prereq"
	"github.com/stretchr/testify/require"
)

// pollerWrites is how many records host A writes while host B polls, one
// per DefaultProgressInterval, as a Run reporting progress would.
const pollerWrites = 60

// Host A rewrites status.json as a busy runner does while two pollers on
// host B read it: every read returns a record (never an error, never "no
// status.json"), and seq never goes back. On GlusterFS, B's client keeps
// the replaced file's handle for up to about a second and answers ESTALE
// meanwhile; with the readers' four reads 50 ms apart alone, a third to a
// half of such polls failed. -v prints what the pollers saw.
func TestTwoHosts_PollersReadEveryRecordWhileTheOtherHostRewritesIt(t *testing.T) {
	prereq.Long(t, "pollers on one mount read records rewritten on the other, about 25 s")
	forEachTwoHosts(t, func(t *testing.T, h *twoHosts) {
		dirA, err := jobstore.Submit(h.A, jobstore.JobSpec{ID: "j1", Kind: "k"})
		require.NoError(t, err)
		dirB := jobstore.JobDir(h.B + "/j1")
		stop := make(chan struct{})
		type seen struct {
			polls, failed, absent, back int
			slowest                     time.Duration
			firstErr                    error
		}
		results := make([]seen, 2)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				r := &results[i]
				var last uint64
				for {
					select {
					case <-stop:
						return
					case <-time.After(10 * time.Millisecond):
					}
					start := time.Now()
					st, err := jobstore.ReadStatus(dirB)
					r.slowest = max(r.slowest, time.Since(start))
					r.polls++
					switch {
					case err != nil:
						r.failed++
						if r.firstErr == nil {
							r.firstErr = err
						}
					case st == nil:
						r.absent++
					case st.Seq < last:
						r.back++
					default:
						last = st.Seq
					}
				}
			})
		}
		for seq := uint64(2); seq < 2+pollerWrites; seq++ {
			require.NoError(t, jobstore.WriteStatus(dirA, jobstore.JobStatus{State: jobstore.Running, Seq: seq}))
			time.Sleep(jobstore.DefaultProgressInterval)
		}
		close(stop)
		wg.Wait()
		for i, r := range results {
			t.Logf("poller %d: %d polls, %d failed, %d absent, %d went back; slowest read %v", i, r.polls, r.failed, r.absent, r.back, r.slowest.Round(time.Millisecond))
			require.Zero(t, r.failed, "poller %d: reads failed, the first with: %v", i, r.firstErr)
			require.Zero(t, r.absent, "poller %d: a read said there is no status.json", i)
			require.Zero(t, r.back, "poller %d: seq went back", i)
		}
	})
}
