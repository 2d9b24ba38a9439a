package jobstore

// AttemptNumbers is how a job's attempts are numbered for people, the one
// numbering jobstore's messages, `jobstore list`, `show` and `serve` use.
//
// The Nth attempt is the Nth time the job ran, counting every ended
// attempt that status.json's attempts keep (lost ones included: a runner
// judged gone ran an attempt), but an interrupted one: a worker's stop
// puts the job back without spending an attempt, so an interrupted attempt
// has the number of the attempt that runs again in its place. These
// numbers are not the attempt fields of the records, which are claim
// numbers of the protocol between runners: a takeover, Retry and a cancel
// each claim one, so those skip.
//
// Limit is the number of the last attempt the job's retry policy allows,
// as it stands: max_attempts (1 when not set), more when attempts that do
// not count against it (a cancelled one retried by Retry) or Retry after
// the last one granted more; ByHand says so.
type AttemptNumbers struct {
	Current int   // the attempt running, due next, or (ended job) the last one; 1 before the first
	Limit   int   // the number of the last attempt the policy allows
	ByHand  bool  // Limit is above max_attempts: Retry gave the job more attempts
	Ended   []int // the number of each of the status's attempts, in order
}

// NumberAttempts numbers the attempts of the job of spec whose status is
// st (nil: not run yet); see AttemptNumbers.
func NumberAttempts(spec JobSpec, st *JobStatus) AttemptNumbers {
	limit := max(spec.MaxAttempts, 1)
	var a AttemptNumbers
	if st != nil {
		a.Ended = make([]int, len(st.Attempts))
	}
	ran, counted := 0, 0 // attempts numbered so far, and of them those counted against the policy
	last := AttemptNumbers{Current: 1, Limit: limit}
	for i, e := range attemptsOf(st) {
		if e.Interrupted {
			a.Ended[i] = ran + 1
			continue
		}
		last = AttemptNumbers{Current: ran + 1, Limit: ran + max(limit-counted, 1)}
		ran++
		a.Ended[i] = ran
		if e.State == Failed || e.State == Lost {
			counted++
		}
	}
	next := AttemptNumbers{Current: ran + 1, Limit: ran + max(limit-counted, 1)}
	if st != nil && st.State.Terminal() && ran > 0 {
		next = last // the last ended attempt is the job's end
	}
	a.Current, a.Limit = next.Current, next.Limit
	a.ByHand = a.Limit > limit
	return a
}

// attemptsOf is st's ended attempts (none for nil).
func attemptsOf(st *JobStatus) []AttemptEnd {
	if st == nil {
		return nil
	}
	return st.Attempts
}
