package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/axqua/jobstore"
)

// scaleTwoHostLooks is how many submissions, each followed by a look
// through the other mount, an op of BenchmarkScaleTwoHosts's impl=look
// makes; scaleTwoHostSamples is how many submissions its impl=latency
// times.
const (
	scaleTwoHostLooks   = 5
	scaleTwoHostSamples = 20
)

// scaleTwoHostScan is the scan interval of BenchmarkScaleTwoHosts's
// worker: it finds a job submitted through the other mount by its scan
// alone, since no event crosses the mounts.
const scaleTwoHostScan = 200 * time.Millisecond

// BenchmarkScaleTwoHosts: a look after a submission made on another host,
// on a root of N finished jobs (jobs=1000, 10000, 50000) seen through two
// bindfs mounts of the two-host kit (no event and no lock crosses them),
// the worker on mount B as host B, the submissions through mount A.
//
// impl=look: a job of kind "k" is submitted through A; once B sees the
// root changed (the mount's attribute cache, up to 1 s), StartNext through
// B (kind "absent": it starts nothing) looks once, in this process, 5
// times an op. Reported: the look's wall time (the FUSE daemon's work
// included; mean ms/look, median and max: a worker's periodic full scan of
// the root, when one falls among them, is the max) and this process's CPU
// for it (cpu-ms/look).
//
// impl=latency: a worker process idle in StartNext through B with a 200 ms
// scan; 20 submissions through A, one at a time; from Submit's return to
// StartNext's return in the worker (one machine, one clock), p50, p99 and
// max in ms; a first submission, not timed, lets it read the root.
//
// It needs root, /dev/fuse and bindfs, and skips otherwise. GlusterFS is
// left out: a fixture of 50,000 jobs written through its client takes
// minutes.
//
//	go test -run '^$' -bench 'ScaleTwoHosts' -benchtime 1x -count 3 . | tee scale-twohost.txt
//	benchstat -col /jobs scale-twohost.txt
func BenchmarkScaleTwoHosts(b *testing.B) {
	for _, n := range scaleSizes {
		b.Run(fmt.Sprintf("jobs=%d/impl=look", n), func(b *testing.B) {
			hostA, hostB := scaleMounts(b, scaleRoot(b, n))
			v := openView(b, hostB) // after the mounts: its watch goes before they do
			var ids []string
			defer func() { removeJobs(b, hostA, ids) }()
			look := func() {
				if r, err := v.StartNext(doneCtx(), jobstore.WithKinds("absent")); r != nil || !errors.Is(err, context.Canceled) {
					b.Fatal("started a job, or failed:", err)
				}
			}
			look() // the first look of a view reads every job
			var cpu, wall time.Duration
			var walls []time.Duration
			for b.Loop() {
				for range scaleTwoHostLooks {
					before := rootStamp(b, hostB)
					dir, err := jobstore.Submit(hostA, jobstore.JobSpec{Kind: "k"})
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, dir.ID())
					deadline := time.Now().Add(scaleGuard)
					for rootStamp(b, hostB) == before {
						if time.Now().After(deadline) {
							b.Fatalf("mount B did not see the root change in %v", scaleGuard)
						}
						time.Sleep(10 * time.Millisecond)
					}
					c0, w0 := cpuTime(b), time.Now()
					look()
					w := time.Since(w0)
					cpu, wall, walls = cpu+cpuTime(b)-c0, wall+w, append(walls, w)
				}
			}
			looks := float64(b.N * scaleTwoHostLooks)
			slices.Sort(walls)
			b.ReportMetric(float64(wall.Microseconds())/1e3/looks, "ms/look")
			b.ReportMetric(float64(quantile(walls, 0.5).Microseconds())/1e3, "p50-ms/look")
			b.ReportMetric(float64(walls[len(walls)-1].Microseconds())/1e3, "max-ms/look")
			b.ReportMetric(float64(cpu.Microseconds())/1e3/looks, "cpu-ms/look")
		})
		b.Run(fmt.Sprintf("jobs=%d/impl=latency", n), func(b *testing.B) {
			hostA, hostB := scaleMounts(b, scaleRoot(b, n))
			for b.Loop() {
				k := startRole(b, latencyWorkerRole, jobstore.HostEnv+"=hostB", "ROOT="+hostB, "SCAN="+scaleTwoHostScan.String())
				reportLatencies(b, scaleLatencies(b, k, hostA, scaleTwoHostSamples))
			}
		})
	}
}

// scaleMounts mounts root twice with bindfs, as the two-host kit does,
// until the benchmark ends; it skips without root, /dev/fuse or bindfs.
func scaleMounts(b *testing.B, root string) (hostA, hostB string) {
	b.Helper()
	needKitRoot(b)
	needBindfs(b)
	base := tempDir(b)
	hostA, hostB = filepath.Join(base, "hostA"), filepath.Join(base, "hostB")
	for _, mnt := range []string{hostA, hostB} {
		if err := os.Mkdir(mnt, 0o755); err != nil {
			b.Fatal(err)
		}
		bindfs(b, root, mnt, false)
	}
	return hostA, hostB
}

// rootStamp is what a stat of dir says of its entries' last change.
func rootStamp(b *testing.B, dir string) time.Time {
	b.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		b.Fatal(err)
	}
	return fi.ModTime()
}
