package main

import (
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
	"github.com/stretchr/testify/assert"
)

// list's note and show's rows number a job's attempts
// one way, whatever claim numbers takeovers and retries spent.
func TestAttempts_ListShowAndPageNumberAlike(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	end := func(claim uint64, state jobstore.State) jobstore.AttemptEnd {
		at = at.Add(time.Minute)
		return jobstore.AttemptEnd{Attempt: claim, State: state, EndedAt: at}
	}
	tests := []struct {
		name   string
		max    int
		st     jobstore.JobStatus
		note   string
		labels []string
	}{
		{"taken over after its first attempt, then succeeded", 3,
			jobstore.JobStatus{State: jobstore.Succeeded, Attempt: 3, Attempts: []jobstore.AttemptEnd{end(1, jobstore.Lost), end(3, jobstore.Succeeded)}},
			"attempt 2/3", []string{"attempt 1", "attempt 2"}},
		{"retried by hand after its last attempt, failed again", 2,
			jobstore.JobStatus{State: jobstore.Failed, Attempt: 4, Attempts: []jobstore.AttemptEnd{end(1, jobstore.Failed), end(2, jobstore.Failed), end(4, jobstore.Failed)}},
			"attempt 3/3, retried by hand", []string{"attempt 1", "attempt 2", "attempt 3"}},
		{"retried by hand, queued under the retry's claim", 2,
			jobstore.JobStatus{State: jobstore.Queued, Attempt: 3, Attempts: []jobstore.AttemptEnd{end(1, jobstore.Failed), end(2, jobstore.Failed)}},
			"attempt 3/3, retried by hand", []string{"attempt 1", "attempt 2"}},
		{"running its second attempt under claim 3", 3,
			jobstore.JobStatus{State: jobstore.Running, Attempt: 3, Attempts: []jobstore.AttemptEnd{end(1, jobstore.Lost)}},
			"attempt 2/3", []string{"attempt 1", "attempt 2"}},
		{"one attempt, none kept", 0,
			jobstore.JobStatus{State: jobstore.Failed, Attempt: 2},
			"", []string{"attempt 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := jobstore.JobSpec{MaxAttempts: tt.max}
			assert.Equal(t, tt.note, jobview.AttemptNote(&spec, &tt.st))
			var labels []string
			for _, a := range jobview.NumberedAttempts(&tt.st) {
				labels = append(labels, a.Label)
			}
			assert.Equal(t, tt.labels, labels, "show's rows (the page's fields too: serve's attemptFields)")
		})
	}
}
