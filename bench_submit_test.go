package jobstore_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/axqua/jobstore"
)

// Enqueue throughput, paired with the atomic replace (writeStatusByHand,
// what one WriteStatus costs at the least) in the same run: the ratio is
// the cost of one job made by Submit, or by SubmitMany in batches of n,
// over the cost of one replace; jobs/s is the jobstore side's rate.
//
//	go test -run '^$' -bench 'SubmitPaired' -count 5 . | tee submit.txt
//	benchstat submit.txt
func BenchmarkSubmitPaired(b *testing.B) {
	for _, batch := range []int{1, 16, 128} {
		name := "Submit"
		if batch > 1 {
			name = "SubmitMany=" + strconv.Itoa(batch)
		}
		b.Run(name, func(b *testing.B) {
			root := benchDir(b)
			base := benchJob(b, root, "base")
			var p pairTimes
			n, jobs := 0, 0
			for ; b.Loop(); n++ {
				if err := p.run(n, func() error {
					for i := range batch {
						if err := writeStatusByHand(base, n*batch+i); err != nil {
							return err
						}
					}
					return nil
				}, func() error {
					return submitBench(root, n, batch)
				}); err != nil {
					b.Fatal(err)
				}
				jobs += batch
			}
			p.report(b, jobs)
			if js := p.jobstore.Load(); js > 0 {
				b.ReportMetric(float64(jobs)/(float64(js)/1e9), "jobs/s")
			}
		})
	}
}

// submitBench submits the jobs of the nth round: one by Submit when batch
// is 1, else batch of them by SubmitMany.
func submitBench(root string, n, batch int) error {
	if batch == 1 {
		_, err := jobstore.Submit(root, jobstore.JobSpec{ID: fmt.Sprintf("job-%d", n), Kind: "bench"})
		return err
	}
	specs := make([]jobstore.JobSpec, batch)
	for i := range specs {
		specs[i] = jobstore.JobSpec{ID: fmt.Sprintf("job-%d-%d", n, i), Kind: "bench"}
	}
	_, err := jobstore.SubmitMany(root, specs)
	return err
}
