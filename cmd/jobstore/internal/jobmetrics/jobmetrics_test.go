package jobmetrics

import (
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/stretchr/testify/require"
)

func TestReadyAt_IsWhenTheJobCouldFirstStart(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	ptr := func(s int) *time.Time { v := at(s); return &v }
	ended := &jobstore.JobStatus{Attempts: []jobstore.AttemptEnd{{Attempt: 1, State: jobstore.Failed, EndedAt: at(50)}}}
	for _, c := range []struct {
		name    string
		spec    *jobstore.JobSpec
		st      *jobstore.JobStatus
		retryAt *time.Time
		want    time.Time
	}{
		{"submitted", &jobstore.JobSpec{SubmittedAt: at(10)}, &jobstore.JobStatus{}, nil, at(10)},
		{"not_before after the submission", &jobstore.JobSpec{SubmittedAt: at(10), NotBefore: at(30)}, &jobstore.JobStatus{}, nil, at(30)},
		{"not_before before the submission", &jobstore.JobSpec{SubmittedAt: at(10), NotBefore: at(5)}, &jobstore.JobStatus{}, nil, at(10)},
		{"a retry whose due time is known", &jobstore.JobSpec{SubmittedAt: at(10)}, ended, ptr(70), at(70)},
		{"a retry whose due time is not known: the attempt's end", &jobstore.JobSpec{SubmittedAt: at(10)}, ended, nil, at(50)},
		{"no spec", nil, ended, nil, at(50)},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, ReadyAt(c.spec, c.st, c.retryAt))
		})
	}
}
