package serve

import (
	"fmt"
	"time"

	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
)

// This file is the schedule as serve's pages show it: when a queued job
// is due and its attempts, as list and show tell them (jobstore.DueAt,
// jobview.WaitState).

// dueText is how a row says when its job is due, at now: "due in 2h00m",
// "retry due in 5m00s"; "" when nothing is pending or the time has come
// (the job waits for a worker).
func dueText(r pageRow, now time.Time) string {
	if r.Due == nil || !r.Due.After(now) {
		return ""
	}
	what := "due"
	if r.Retrying {
		what = "retry due"
	}
	return what + " in " + jobview.FmtAge(r.Due.Sub(now))
}

// rowAttemptText is a row's attempt with the most it may make: "2/3", or
// "2" for a job of one attempt; "" before the first.
func rowAttemptText(r pageRow) string {
	switch {
	case r.Attempt == 0 && r.MaxAttempts <= 1:
		return ""
	case r.MaxAttempts > 1:
		return fmt.Sprintf("%d/%d", r.Attempt, r.MaxAttempts)
	}
	return fmt.Sprint(r.Attempt)
}
