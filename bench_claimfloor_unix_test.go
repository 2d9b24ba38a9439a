//go:build unix

package jobstore_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/internal/flock"
)

// BenchmarkClaimFloor measures what a job's life costs with jobstore
// against what any claim that is atomic at the server costs on this disk:
// the bare system calls of a lifecycle's three writes (a durable one, one
// without fsync, a durable one; create, write, fsync, close, rename, fsync
// of the directory), done five ways in turn on fresh jobs per iteration,
// each way going first in turn, so that the machine's load and the journal
// falls on all five alike:
//
//   - plain: the writes alone, in the job directory;
//   - mkdir: a mkdir of the attempt directory first (the claim), the floor
//     of any jobstore that keeps one runner per job across hosts;
//   - file: an exclusive create of a claim file instead of the directory (a
//     claim as cheap as a new name gets, though one that could not fence a
//     write);
//   - lock: mkdir's claim and writes, inside job.lock held with its
//     holder's record as a Run holds it: flock, an fstat (the file is
//     empty, so it is neither read nor truncated) and a write of the record
//     before, a truncate to zero and an unlock after (the record names the
//     holder from the first instant, so a second runner's ErrLocked can say
//     who runs the job);
//   - jobstore: the same life through jobstore, as BenchmarkLifecycle lives
//     it (Start, ten coalesced Progress calls, Flush, Finish, Close).
//
// It reports each way's mean per job (plain-us, mkdir-us, file-us,
// lock-us, jobstore-us) and the ratios mkdir/plain, file/plain,
// jobstore/mkdir (what jobstore adds to its floor) and jobstore/lock (what
// it adds to the floor and its lock's record).
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
	holder := []byte(`{"pid":1020,"host":"vm","program":"jobstore.test","started_at":"2026-12-01T17:30:00.123456789Z","pid_scope":"709a17c5-0eaf-421f-a5dd","pid_start":"12345"}`)
	ways := []string{"plain", "mkdir", "file", "lock", "jobstore"}
	dirs := make([][5]string, b.N)
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
			if ways[w] == "lock" {
				// Submit makes job.lock with the job: it exists before Start.
				if err := os.WriteFile(filepath.Join(dir, "job.lock"), nil, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			dirs[i][w] = dir
		}
	}
	var spent [5]time.Duration
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
			case "lock":
				lockedLife(b, dir, holder, func() {
					if err := os.Mkdir(filepath.Join(dir, ".run-1"), 0o755); err != nil {
						b.Fatal(err)
					}
					write(dir, "", true)
					write(dir, "", false)
					write(dir, "", true)
				})
				spent[w] += time.Since(t0)
				continue
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
	b.ReportMetric(us(spent[3]), "lock-us")
	b.ReportMetric(us(spent[4]), "jobstore-us")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "mkdir/plain")
	b.ReportMetric(float64(spent[2])/float64(spent[0]), "file/plain")
	b.ReportMetric(float64(spent[4])/float64(spent[1]), "jobstore/mkdir")
	b.ReportMetric(float64(spent[4])/float64(spent[3]), "jobstore/lock")
}

// lockedLife runs life inside dir's job.lock, held as a Run holds it: the
// holder's record written when it is taken, and cleared when it is
// released.
func lockedLife(b *testing.B, dir string, holder []byte, life func()) {
	f, err := os.OpenFile(filepath.Join(dir, "job.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := flock.Lock(f); err != nil {
		b.Fatal(err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != 0 {
		b.Fatalf("job.lock of a fresh job: %v, %v", fi, err)
	}
	if _, err := f.WriteAt(holder, 0); err != nil {
		b.Fatal(err)
	}
	life()
	if err := f.Truncate(0); err != nil {
		b.Fatal(err)
	}
	if err := flock.Unlock(f); err != nil {
		b.Fatal(err)
	}
}
