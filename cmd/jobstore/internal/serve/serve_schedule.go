package serve

import (
	"fmt"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/jobview"
)

// This file is the schedule as serve's pages show it: when a queued job
// is due (its not_before, or the retry_at of a pending retry), its
// priority and its attempts, and the two filters by schedule.

// Filters by schedule, offered with the states: a queued job not yet due
// by its not_before, and a queued job whose retry is pending.
const (
	scheduledFilter = "scheduled"
	retryingFilter  = "retrying"
)

// scheduleOf is when a queued job (or one with no status yet) may start,
// and whether that is a pending retry: the status's retry_at, else the
// spec's not_before; nil when it may start at once or is not queued.
func scheduleOf(en jobstore.Entry) (due *time.Time, retrying bool) {
	st := en.Status
	if st != nil && st.State != jobstore.Queued {
		return nil, false
	}
	if st != nil && st.RetryAt != nil {
		at := *st.RetryAt
		return &at, true
	}
	if en.Spec != nil && !en.Spec.NotBefore.IsZero() {
		at := en.Spec.NotBefore
		return &at, false
	}
	return nil, false
}

// matchSchedule reports whether en is chosen by filter, one of the
// filters by schedule, at now: scheduled is a job that waits for its
// not_before, retrying one whose retry is pending (due or not).
func matchSchedule(filter string, en jobstore.Entry, now time.Time) bool {
	due, retrying := scheduleOf(en)
	switch filter {
	case scheduledFilter:
		return due != nil && !retrying && due.After(now)
	case retryingFilter:
		return retrying
	}
	return false
}

// isScheduleFilter reports whether a page's state filter is a filter by
// schedule.
func isScheduleFilter(state string) bool {
	return state == scheduledFilter || state == retryingFilter
}

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
