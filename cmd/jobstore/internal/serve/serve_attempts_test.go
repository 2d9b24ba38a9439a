package serve

import (
	"strings"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/assert"
)

// The page numbers a job's attempts as list and show do (jobview's
// numbering): the Nth counted attempt, whatever claim numbers takeovers
// and retries spent, with the running one last.
func TestAttemptFields_NumberAttemptsAsListAndShowDo(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	end := func(claim uint64, state jobstore.State) jobstore.AttemptEnd {
		at = at.Add(time.Minute)
		return jobstore.AttemptEnd{Attempt: claim, State: state, EndedAt: at, Error: "boom"}
	}
	tests := []struct {
		name   string
		st     jobstore.JobStatus
		labels []string
		last   string // in the last field's line
	}{
		{"taken over after its first attempt, then succeeded",
			jobstore.JobStatus{State: jobstore.Succeeded, Attempt: 3, Attempts: []jobstore.AttemptEnd{end(1, jobstore.Lost), end(3, jobstore.Succeeded)}},
			[]string{"attempt 1", "attempt 2"}, "succeeded"},
		{"retried by hand after its last attempt, failed again",
			jobstore.JobStatus{State: jobstore.Failed, Attempt: 4, Attempts: []jobstore.AttemptEnd{end(1, jobstore.Failed), end(2, jobstore.Failed), end(4, jobstore.Failed)}},
			[]string{"attempt 1", "attempt 2", "attempt 3"}, "failed"},
		{"running its second attempt under claim 3",
			jobstore.JobStatus{State: jobstore.Running, Attempt: 3, Host: "h1", Attempts: []jobstore.AttemptEnd{end(1, jobstore.Lost)}},
			[]string{"attempt 1", "attempt 2"}, "running on h1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields := attemptFields(&tt.st)
			var labels []string
			for _, f := range fields {
				labels = append(labels, f.Name)
			}
			assert.Equal(t, tt.labels, labels)
			if assert.NotEmpty(t, fields) {
				assert.True(t, strings.HasPrefix(fields[len(fields)-1].Value, tt.last), "last field: %q", fields[len(fields)-1].Value)
			}
		})
	}
}
