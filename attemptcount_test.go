package jobstore_test

import (
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
)

func TestNumberAttempts_OneNumberingOfWhatRan(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	end := func(claim uint64, state jobstore.State, interrupted bool) jobstore.AttemptEnd {
		at = at.Add(time.Minute)
		return jobstore.AttemptEnd{Attempt: claim, State: state, Interrupted: interrupted, EndedAt: at}
	}
	tests := []struct {
		name string
		max  int
		st   *jobstore.JobStatus
		want jobstore.AttemptNumbers
	}{
		{"not run yet", 3, nil, jobstore.AttemptNumbers{Current: 1, Limit: 3}},
		{"first running", 3, &jobstore.JobStatus{State: jobstore.Running, Attempt: 1},
			jobstore.AttemptNumbers{Current: 1, Limit: 3, Ended: []int{}}},
		{"one attempt, ended without keeping it", 0, &jobstore.JobStatus{State: jobstore.Failed, Attempt: 1},
			jobstore.AttemptNumbers{Current: 1, Limit: 1, Ended: []int{}}},
		{"taken over (claims skip), then succeeded", 3, &jobstore.JobStatus{State: jobstore.Succeeded, Attempt: 3,
			Attempts: []jobstore.AttemptEnd{end(1, jobstore.Lost, false), end(3, jobstore.Succeeded, false)}},
			jobstore.AttemptNumbers{Current: 2, Limit: 3, Ended: []int{1, 2}}},
		{"retry pending after a failure", 3, &jobstore.JobStatus{State: jobstore.Queued, Attempt: 1,
			Attempts: []jobstore.AttemptEnd{end(1, jobstore.Failed, false)}},
			jobstore.AttemptNumbers{Current: 2, Limit: 3, Ended: []int{1}}},
		{"an interruption spends no attempt", 2, &jobstore.JobStatus{State: jobstore.Running, Attempt: 3,
			Attempts: []jobstore.AttemptEnd{end(1, jobstore.Failed, true), end(2, jobstore.Failed, false)}},
			jobstore.AttemptNumbers{Current: 2, Limit: 2, Ended: []int{1, 1}}},
		{"ended failed on its last attempt", 2, &jobstore.JobStatus{State: jobstore.Failed, Attempt: 2,
			Attempts: []jobstore.AttemptEnd{end(1, jobstore.Failed, false), end(2, jobstore.Failed, false)}},
			jobstore.AttemptNumbers{Current: 2, Limit: 2, Ended: []int{1, 2}}},
		{"retried by hand after its last, failed again", 2, &jobstore.JobStatus{State: jobstore.Failed, Attempt: 4,
			Attempts: []jobstore.AttemptEnd{end(1, jobstore.Failed, false), end(2, jobstore.Failed, false), end(4, jobstore.Failed, false)}},
			jobstore.AttemptNumbers{Current: 3, Limit: 3, ByHand: true, Ended: []int{1, 2, 3}}},
		{"retried by hand, queued", 2, &jobstore.JobStatus{State: jobstore.Queued, Attempt: 3,
			Attempts: []jobstore.AttemptEnd{end(1, jobstore.Failed, false), end(2, jobstore.Failed, false)}},
			jobstore.AttemptNumbers{Current: 3, Limit: 3, ByHand: true, Ended: []int{1, 2}}},
		{"a cancelled attempt retried keeps every failure's budget", 2, &jobstore.JobStatus{State: jobstore.Running, Attempt: 3,
			Attempts: []jobstore.AttemptEnd{end(1, jobstore.Cancelled, false)}},
			jobstore.AttemptNumbers{Current: 2, Limit: 3, ByHand: true, Ended: []int{1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := jobstore.NumberAttempts(jobstore.JobSpec{MaxAttempts: tt.max}, tt.st)
			if tt.st == nil {
				got.Ended = nil
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// A job's attempts add up as the library writes them: a first attempt
// failed, a second whose runner was killed and taken over, a retry by
// hand, and a third that failed: numbered 1, 2, 3, the last "3 of 3, by
// hand", whatever claim numbers the takeover and the retry spent.
func TestNumberAttempts_AddUpThroughATakeoverAndARetryByHand(t *testing.T) {
	dir, err := jobstore.Submit(tempDir(t), jobstore.JobSpec{Kind: "k", MaxAttempts: 2, Backoff: tinyBackoff, MaxBackoff: tinyBackoff})
	if !assert.NoError(t, err) {
		return
	}
	r, err := jobstore.Start(dir)
	if !assert.NoError(t, err) {
		return
	}
	assert.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Failed, Error: "first"}))
	assert.NoError(t, r.Close())
	time.Sleep(2 * tinyBackoff)
	killedRunner(t, dir)
	_, err = startTakingOver(t, dir)
	assert.ErrorIs(t, err, jobstore.ErrWrongState, "the killed attempt was the last")
	st := readStatus(t, dir)
	assert.Equal(t, jobstore.Lost, st.State)
	assert.NoError(t, jobstore.Retry(dir))
	r, err = jobstore.Start(dir)
	if !assert.NoError(t, err) {
		return
	}
	assert.NoError(t, r.Finish(jobstore.Outcome{State: jobstore.Failed, Error: "third"}))
	assert.NoError(t, r.Close())
	st = readStatus(t, dir)
	spec, err := jobstore.ReadSpec(dir)
	assert.NoError(t, err)
	n := jobstore.NumberAttempts(spec, &st)
	assert.Equal(t, []int{1, 2, 3}, n.Ended, "attempts %+v", st.Attempts)
	assert.Equal(t, 3, n.Current)
	assert.Equal(t, 3, n.Limit)
	assert.True(t, n.ByHand)
	assert.Greater(t, st.Attempt, uint64(3), "claim numbers skip: the takeover and the retry each claimed one")
}
