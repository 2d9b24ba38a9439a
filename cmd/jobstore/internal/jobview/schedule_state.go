package jobview

import (
	"fmt"
	"slices"
	"time"

	"github.com/axqua/jobstore"
)

// How list and show tell a queued job's schedule: when it may start (its
// not_before, or a pending retry's retry_at) and its priority; and the two
// filter states that choose the jobs still waiting for that time.

// The filter states of queued jobs that wait (WaitState); serve's pages
// filter by the same names.
const (
	ScheduledState = "scheduled" // its not_before is later than now
	RetryingState  = "retrying"  // a failed attempt's retry is pending, due or not
)

// ScheduleStates are the filter states WaitState gives.
func ScheduleStates() []string { return []string{ScheduledState, RetryingState} }

// WaitState is RetryingState for a queued job whose failed attempt's
// retry is pending (due or not: it waits for a worker to retry it),
// ScheduledState for another whose not_before is later than now, and ""
// for any other.
func WaitState(en jobstore.Entry, now time.Time) string {
	switch {
	case en.Err != nil:
		return ""
	case en.Status != nil && en.Status.State == jobstore.Queued && en.Status.RetryAt != nil:
		return RetryingState
	case en.Spec != nil && en.Spec.NotBefore.After(now) && (en.Status == nil || en.Status.State == jobstore.Queued):
		return ScheduledState
	}
	return ""
}

// ScheduleNote is list's and show's note on a queued job: "due in 2h" (its
// not_before), "retrying in 30s" (a pending retry), and its priority when
// not 0; "" for a job that is due and of priority 0, or not queued.
func ScheduleNote(spec *jobstore.JobSpec, st *jobstore.JobStatus, now time.Time) string {
	if st == nil || st.State != jobstore.Queued {
		return ""
	}
	note := ""
	if due, retry := jobstore.DueAt(spec, st); due.After(now) {
		note = "due in " + FmtUntil(due.Sub(now))
		if retry {
			note = "retrying in " + FmtUntil(due.Sub(now))
		}
	}
	if spec != nil && spec.Priority != 0 {
		if note != "" {
			note += ", "
		}
		note += fmt.Sprintf("priority %d", spec.Priority)
	}
	return note
}

// FmtUntil is a wait of d, rounded up, in its largest unit and the next:
// "30s", "4m", "4m30s" under 10 minutes, "2h", "1h30m", "3d", "3d4h". A
// wait is rounded up, so a job due in 2 hours reads "2h", not "1h59m".
func FmtUntil(d time.Duration) string {
	up := func(unit time.Duration) time.Duration { return (d + unit - 1) / unit * unit }
	switch {
	case d <= time.Minute:
		return fmt.Sprintf("%ds", int(up(time.Second)/time.Second))
	case d <= 10*time.Minute:
		d = up(time.Second)
		return joinUnits(int(d/time.Minute), "m", int(d%time.Minute/time.Second), "s")
	case d <= 24*time.Hour:
		d = up(time.Minute)
		return joinUnits(int(d/time.Hour), "h", int(d%time.Hour/time.Minute), "m")
	}
	d = up(time.Hour)
	return joinUnits(int(d/(24*time.Hour)), "d", int(d%(24*time.Hour)/time.Hour), "h")
}

// joinUnits is "<a><ua><b><ub>", leaving out a zero a or b.
func joinUnits(a int, ua string, b int, ub string) string {
	switch {
	case a == 0:
		return fmt.Sprint(b, ub)
	case b == 0:
		return fmt.Sprint(a, ua)
	}
	return fmt.Sprint(a, ua, b, ub)
}

// IsScheduleState reports whether s is a filter state of WaitState.
func IsScheduleState(s string) bool { return slices.Contains(ScheduleStates(), s) }
