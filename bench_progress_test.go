package jobstore_test

import (
	"testing"
	"time"

	"github.com/axqua/jobstore"
)

// BenchmarkProgress calls Run.Progress in a loop from one goroutine, with
// every call written (impl=every-call, WithProgressInterval(0): the
// behaviour before coalescing, the baseline) and coalesced at the default
// interval (impl=coalesced). calls/s and writes/s are the figures; compare
// them within one run:
//
//	go test -run '^$' -bench 'Progress$' -benchtime 3s -count 6 . | tee progress.txt
//	benchstat -col /impl progress.txt
func BenchmarkProgress(b *testing.B) {
	for _, impl := range []struct {
		name     string
		interval time.Duration
	}{
		{"every-call", 0},
		{"coalesced", jobstore.DefaultProgressInterval},
	} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			dir := benchJob(b, benchDir(b), "job")
			r, err := jobstore.Start(dir, jobstore.WithProgressInterval(impl.interval))
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			first := r.Status().Seq
			i := 0
			for b.Loop() {
				i++
				if err := r.Progress(float64(i%1000)/1000, "working"); err != nil {
					b.Fatal(err)
				}
			}
			secs := b.Elapsed().Seconds()
			writes := r.Status().Seq - first
			b.ReportMetric(float64(b.N)/secs, "calls/s")
			b.ReportMetric(float64(writes)/secs, "writes/s")
		})
	}
}
