package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// row is one line of the table.
type row int

const (
	rowEnqueueOne row = iota
	rowEnqueueBatch
	rowDrain1
	rowDrainN
	rowCPUSelf1
	rowCPUServer1
	rowCPUTotal1
	rowCPUSelfN
	rowCPUServerN
	rowCPUTotalN
	rowMachineCPU1
	rowMachineCPUN
	rowBusy1
	rowBusyN
	rowLatency50
	rowLatency99
	rowCount
)

// drainRows are the rows a drain fills: one at a time, or in parallel.
type drainRows struct{ rate, cpuSelf, cpuServer, cpuTotal, machineCPU, busy row }

func drainRowsFor(parallel bool) drainRows {
	if parallel {
		return drainRows{rowDrainN, rowCPUSelfN, rowCPUServerN, rowCPUTotalN, rowMachineCPUN, rowBusyN}
	}
	return drainRows{rowDrain1, rowCPUSelf1, rowCPUServer1, rowCPUTotal1, rowMachineCPU1, rowBusy1}
}

func (r row) label(c config) string {
	return [...]string{
		"enqueue, one at a time (jobs/s)",
		fmt.Sprintf("enqueue, batches of %d (jobs/s)", c.batch),
		"drain, 1 at a time (jobs/s)",
		fmt.Sprintf("drain, %d at a time (jobs/s)", c.parallel),
		"CPU per job, drain at 1: this process (µs)",
		"CPU per job, drain at 1: server (µs)",
		"CPU per job, drain at 1: total (µs)",
		fmt.Sprintf("CPU per job, drain at %d: this process (µs)", c.parallel),
		fmt.Sprintf("CPU per job, drain at %d: server (µs)", c.parallel),
		fmt.Sprintf("CPU per job, drain at %d: total (µs)", c.parallel),
		"CPU per job, drain at 1: the machine, kernel threads included (µs)",
		fmt.Sprintf("CPU per job, drain at %d: the machine, kernel threads included (µs)", c.parallel),
		"the machine's CPUs busy, drain at 1 (% of their time)",
		fmt.Sprintf("the machine's CPUs busy, drain at %d (%% of their time)", c.parallel),
		"submit → handler, p50 (ms)",
		"submit → handler, p99 (ms)",
	}[r]
}

// systemResults holds one system's figures: one per round for each row,
// and every latency sample of every round.
type systemResults struct {
	name      string
	rounds    [rowCount][]float64
	latencies []time.Duration
}

func (s *systemResults) add(r row, v float64) { s.rounds[r] = append(s.rounds[r], v) }

// value is a row's median over the rounds, with the range; ok is false
// when the row was never measured. The latency rows are percentiles of the
// samples of all rounds.
func (s *systemResults) value(r row) (med, lo, hi float64, ok bool) {
	switch r {
	case rowLatency50, rowLatency99:
		if len(s.latencies) == 0 {
			return 0, 0, 0, false
		}
		q := map[row]float64{rowLatency50: 0.50, rowLatency99: 0.99}[r]
		v := float64(percentile(s.latencies, q)) / float64(time.Millisecond)
		return v, v, v, true
	}
	if len(s.rounds[r]) == 0 {
		return 0, 0, 0, false
	}
	med, lo, hi = summary(s.rounds[r])
	return med, lo, hi, true
}

// summary is v's median (the upper middle value of an even count), least
// and greatest value; v, not empty, is not modified.
func summary(v []float64) (med, lo, hi float64) {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2], s[0], s[len(s)-1]
}

func percentile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

type results struct{ systems []*systemResults }

func newResults(systems []system) *results {
	var r results
	for _, s := range systems {
		r.systems = append(r.systems, &systemResults{name: s.name()})
	}
	return &r
}

func (r *results) of(name string) *systemResults {
	if s := r.find(name); s != nil {
		return s
	}
	panic("no system " + name)
}

// find is the system named name, or nil if it was not measured.
func (r *results) find(name string) *systemResults {
	for _, s := range r.systems {
		if s.name == name {
			return s
		}
	}
	return nil
}

// perRound is each round's figure in row num divided by its figure in row
// den, for the rounds that have both.
func (s *systemResults) perRound(num, den row) []float64 {
	var v []float64
	for i := range min(len(s.rounds[num]), len(s.rounds[den])) {
		if d := s.rounds[den][i]; d != 0 {
			v = append(v, s.rounds[num][i]/d)
		}
	}
	return v
}

// print writes the table in Markdown: each system's median over the
// rounds (with the range when the rounds differ), then jobstore's figure,
// and its layout's floor's, divided by each peer's.
func (r *results) print(w io.Writer, c config) {
	fmt.Fprintf(w, "\n%d no-op jobs per measurement, %d rounds, %d latency samples per round and system\n\n",
		c.jobs, c.rounds, c.latencySamples)
	bases, peers := r.split()
	fmt.Fprint(w, "| |")
	for _, s := range r.systems {
		fmt.Fprintf(w, " %s |", s.name)
	}
	for _, b := range bases {
		for _, p := range peers {
			fmt.Fprintf(w, " %s / %s |", b.name, p.name)
		}
	}
	fmt.Fprint(w, "\n|---|")
	for range len(r.systems) + len(bases)*len(peers) {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for row := range rowCount {
		fmt.Fprintf(w, "| %s |", row.label(c))
		for _, s := range r.systems {
			fmt.Fprintf(w, " %s |", cell(s, row))
		}
		for _, b := range bases {
			for _, p := range peers {
				fmt.Fprintf(w, " %s |", ratio(b, p, row))
			}
		}
		fmt.Fprintln(w)
	}
	for _, s := range r.systems {
		if _, _, _, ok := s.value(rowEnqueueBatch); !ok {
			fmt.Fprintf(w, "\n%s: no batched enqueue (n/a); its jobs for the parallel drain were enqueued one at a time.", s.name)
		}
	}
	if slices.ContainsFunc(r.systems, func(s *systemResults) bool { return s.name == "floor" }) {
		fmt.Fprint(w, "\nfloor: jobstore's layout made bare on the same disk (no reads, no checks, no look for the next job; "+
			"its batched enqueue makes no fsync at all): a rate above it, or a latency or CPU below it, is out of reach of that layout here.")
	}
	if slices.ContainsFunc(r.systems, func(s *systemResults) bool { return strings.HasPrefix(s.name, floorWithWork) }) {
		fmt.Fprint(w, "\nfloor+D: floor whose drained jobs each spend D of one CPU in their start, before its first call (-floor-work): "+
			"the layout with D of code per job.")
	}
	fmt.Fprintln(w)
}

// floorWithWork begins the name of each floor+D system (-floor-work).
const floorWithWork = "floor+"

// split returns the systems measured against the peers (jobstore, its
// floor and the floors with work) and the peers.
func (r *results) split() (bases, peers []*systemResults) {
	for _, s := range r.systems {
		if s.name == "jobstore" || s.name == "floor" || strings.HasPrefix(s.name, floorWithWork) {
			bases = append(bases, s)
		} else {
			peers = append(peers, s)
		}
	}
	return bases, peers
}

// ratio is b's figure in row divided by p's, or n/a.
func ratio(b, p *systemResults, row row) string {
	x, _, _, okX := b.value(row)
	y, _, _, okY := p.value(row)
	if !okX || !okY || y == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", x/y)
}

func cell(s *systemResults, r row) string {
	med, lo, hi, ok := s.value(r)
	if !ok {
		return "n/a"
	}
	return withRange(med, lo, hi)
}

// withRange prints med, and the range lo–hi when they differ.
func withRange(med, lo, hi float64) string {
	if lo == hi {
		return num(med)
	}
	return fmt.Sprintf("%s (%s–%s)", num(med), num(lo), num(hi))
}

// num prints three significant figures at most, without exponents.
func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
