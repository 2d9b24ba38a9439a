//go:build unix

package jobstore_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/axqua/jobstore"
)

// BenchmarkClaimFloor measures what a job's life costs with jobstore
// against what any claim that is atomic at the server costs on this disk:
// the bare system calls of a lifecycle's three writes (a durable one, one
// without fsync, a durable one; create, write, fsync, close, rename, fsync
// of the directory), done four ways in turn on fresh jobs per iteration,
// each way going first in turn, so that the machine's load and the journal
// falls on all four alike:
//
//   - plain: the writes alone, in the job directory;
//   - mkdir: a mkdir of the attempt directory first (the claim), the floor
//     of any jobstore that keeps one runner per job across hosts;
//   - file: an exclusive create of a claim file instead of the directory (a
//     claim as cheap as a new name gets, though one that could not fence a
//     write);
//   - jobstore: the same life through jobstore, as BenchmarkLifecycle lives
//     it (Start, ten coalesced Progress calls, Flush, Finish, Close).
//
// It reports each way's mean per job (plain-us, mkdir-us, file-us,
// jobstore-us) and the ratios mkdir/plain, file/plain and jobstore/mkdir,
// the last being what jobstore adds to its floor.
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
	ways := []string{"plain", "mkdir", "file", "jobstore"}
	dirs := make([][4]string, b.N)
	for i := range dirs {
		for w := range ways {
			if ways[w] == "jobstore" {
				dir, err := jobstore.Submit(root, jobstore.JobSpec{ID: "life-" + strconv.Itoa(i), Kind: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				dirs[i][w] = string(dir)
				continue
			}
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
		for k := range dirs[i] {
			// The ways take turns at going first: an fsync commits the whole
			// journal, so each way pays for what the one before it left
			// unsynced (its NoSync write, a lock released), and every way
			// must follow every other as often.
			w := (i + k) % len(ways)
			dir := dirs[i][w]
			t0 := time.Now()
			switch ways[w] {
			case "mkdir":
				if err := os.Mkdir(filepath.Join(dir, ".run-1"), 0o755); err != nil {
					b.Fatal(err)
				}
			case "file":
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
			case "jobstore":
				lifecycle(b, jobstore.JobDir(dir))
				spent[w] += time.Since(t0)
				continue
			}
			write(dir, "", true)
			write(dir, "", false)
			write(dir, "", true)
			spent[w] += time.Since(t0)
		}
	}
	b.StopTimer()
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(us(spent[0]), "plain-us")
	b.ReportMetric(us(spent[1]), "mkdir-us")
	b.ReportMetric(us(spent[2]), "file-us")
	b.ReportMetric(us(spent[3]), "jobstore-us")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "mkdir/plain")
	b.ReportMetric(float64(spent[2])/float64(spent[0]), "file/plain")
	b.ReportMetric(float64(spent[3])/float64(spent[1]), "jobstore/mkdir")
}
