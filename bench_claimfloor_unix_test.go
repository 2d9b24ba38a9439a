//go:build unix

package jobstore_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkClaimFloor measures what any claim that is atomic at the server
// costs a job's life on this disk, without jobstore: the bare system calls
// of a lifecycle's three writes (a durable one, one without fsync, a
// durable one; create, write, fsync, close, rename, fsync of the
// directory), done three ways in turn on three fresh jobs per iteration, so
// that the machine's load falls on all three alike:
//
//   - plain: the writes alone, in the job directory;
//   - mkdir: a mkdir of the attempt directory first (the claim);
//   - claim: the mkdir, an owner record written in it, and each temp file
//     made in it and renamed out (what a Run does);
//   - file: an exclusive create of a claim file holding the owner record
//     instead of the directory (a claim as cheap as a new name gets, though
//     one that could not fence a write).
//
// It reports each way's mean per job (plain-us, mkdir-us, claim-us,
// file-us) and their ratios to plain. docs/benchmarks.md compares them with
// BenchmarkLifecycle's before/after ratio.
func BenchmarkClaimFloor(b *testing.B) {
	root := benchDir(b)
	data := make([]byte, 250)
	write := func(dir, sub string, sync bool) {
		tmp := filepath.Join(dir, sub, ".status.json"+strconv.Itoa(len(sub)))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			b.Fatal(err)
		}
		if sync {
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "status.json")); err != nil {
			b.Fatal(err)
		}
		if sync {
			d, err := os.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			if err := d.Sync(); err != nil {
				b.Fatal(err)
			}
			d.Close()
		}
	}
	ways := []string{"plain", "mkdir", "claim", "file"}
	dirs := make([][4]string, b.N)
	for i := range dirs {
		for w := range ways {
			dir := filepath.Join(root, ways[w]+strconv.Itoa(i))
			if err := os.Mkdir(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			write(dir, "", true) // the queued record
			dirs[i][w] = dir
		}
	}
	var spent [4]time.Duration
	b.ResetTimer()
	for i := range dirs {
		for w, dir := range dirs[i] {
			t0 := time.Now()
			sub := ""
			if w == 1 || w == 2 {
				if err := os.Mkdir(filepath.Join(dir, ".run-1"), 0o755); err != nil {
					b.Fatal(err)
				}
			}
			if w == 3 {
				f, err := os.OpenFile(filepath.Join(dir, ".run-1"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := f.Write(data); err != nil {
					b.Fatal(err)
				}
				if err := f.Close(); err != nil {
					b.Fatal(err)
				}
			}
			if w == 2 {
				sub = ".run-1"
				if err := os.WriteFile(filepath.Join(dir, sub, "owner.json"), data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			write(dir, sub, true)
			write(dir, sub, false)
			write(dir, sub, true)
			spent[w] += time.Since(t0)
		}
	}
	b.StopTimer()
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(us(spent[0]), "plain-us")
	b.ReportMetric(us(spent[1]), "mkdir-us")
	b.ReportMetric(us(spent[2]), "claim-us")
	b.ReportMetric(us(spent[3]), "file-us")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "mkdir/plain")
	b.ReportMetric(float64(spent[2])/float64(spent[0]), "claim/plain")
	b.ReportMetric(float64(spent[3])/float64(spent[0]), "file/plain")
}
