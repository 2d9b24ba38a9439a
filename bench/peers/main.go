package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

// config is the command line.
type config struct {
	jobs, batch, latencySamples, rounds int
	parallel                            int
	dir                                 string
	only                                string
	pgDSN, pgPIDFile                    string
	redisAddr, redisPIDFile             string
	riverCooldown, riverPoll            time.Duration
	asynqCheck                          time.Duration
	diskTime                            time.Duration
	fsyncs                              fsyncCounts
	cpuProfile                          string
	floorWork                           []time.Duration
}

func parseFlags() config {
	var c config
	flag.IntVar(&c.jobs, "jobs", 2000, "no-op jobs per measurement")
	flag.IntVar(&c.batch, "batch", 100, "jobs per batched enqueue call")
	flag.IntVar(&c.parallel, "parallel", 8, "handlers at once in the parallel drain")
	flag.IntVar(&c.latencySamples, "latency", 100, "latency samples per round and system")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds; each runs every system once, in a rotated order")
	flag.StringVar(&c.dir, "dir", ".", "directory under which jobstore's roots and the fsync loop's files go (not tmpfs)")
	flag.StringVar(&c.only, "only", "", "comma-separated systems to run (jobstore,floor,river,asynq); empty: all")
	flag.StringVar(&c.pgDSN, "pg", "", "PostgreSQL connection string for river; empty: river is skipped")
	flag.StringVar(&c.pgPIDFile, "pg-pidfile", "", "PostgreSQL's postmaster.pid, to count the server's CPU time")
	flag.StringVar(&c.redisAddr, "redis", "", "Redis address for asynq; empty: asynq is skipped")
	flag.StringVar(&c.redisPIDFile, "redis-pidfile", "", "Redis's pidfile, to count the server's CPU time")
	flag.DurationVar(&c.riverCooldown, "river-fetch-cooldown", time.Millisecond, "river's FetchCooldown (river's default: 100ms)")
	flag.DurationVar(&c.riverPoll, "river-fetch-poll-interval", time.Second, "river's FetchPollInterval (river's default: 1s)")
	flag.DurationVar(&c.asynqCheck, "asynq-check-interval", time.Millisecond, "asynq's TaskCheckInterval (asynq's default: 1s)")
	flag.DurationVar(&c.diskTime, "disk-time", time.Second, "how long each fsync loop runs, once per round")
	flag.IntVar(&c.fsyncs.submitFiles, "fsyncs-submit-files", 2, "file fsyncs of one jobstore Submit")
	flag.IntVar(&c.fsyncs.submitDirs, "fsyncs-submit-dirs", 3, "directory fsyncs of one jobstore Submit")
	flag.IntVar(&c.fsyncs.runFiles, "fsyncs-run-files", 2, "file fsyncs of one job run by a Worker (start and finish)")
	flag.IntVar(&c.fsyncs.runDirs, "fsyncs-run-dirs", 2, "directory fsyncs of one job run by a Worker")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "write this process's CPU profile of the whole run to this file")
	floorWork := flag.String("floor-work", "", "comma-separated CPU times (250us,1ms): for each, a floor+D that spends D of one CPU in each drained job's start")
	flag.Parse()
	var err error
	if c.floorWork, err = parseDurations(*floorWork); err != nil {
		log.Fatalf("-floor-work: %v", err)
	}
	return c
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("peers: ")
	c := parseFlags()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	systems := openSystems(ctx, c)
	defer func() {
		for _, s := range systems {
			s.close()
		}
	}()

	res := newResults(systems)
	var disk []diskRates
	for r := range c.rounds {
		d, err := measureDisk(c.dir, c.diskTime, c.fsyncs, drainWriters(c))
		if err != nil {
			log.Fatalf("fsync loop: %v", err)
		}
		disk = append(disk, d)
		for i := range systems {
			s := systems[(r+i)%len(systems)]
			if err := measureRound(ctx, c, s, res.of(s.name())); err != nil {
				log.Fatalf("round %d, %s: %v", r+1, s.name(), err)
			}
		}
		fmt.Fprintf(os.Stderr, "round %d of %d done\n", r+1, c.rounds)
	}
	res.print(os.Stdout, c)
	printDisk(os.Stdout, c, disk, fileSystemOf(c.dir))
	printScaling(os.Stdout, c, res, disk)
}

func wanted(c config, name string) bool {
	return c.only == "" || slices.Contains(strings.Split(c.only, ","), name)
}

// openSystems returns the systems to measure, jobstore and its layout's
// floor first, and says in one line why a peer is left out.
func openSystems(ctx context.Context, c config) []system {
	var out []system
	if wanted(c, "jobstore") {
		s, err := newJobstore(c.dir)
		if err != nil {
			log.Fatalf("jobstore: %v", err)
		}
		out = append(out, s)
	}
	if wanted(c, "floor") {
		if s, err := newFloor(c.dir); err != nil {
			fmt.Printf("floor: skipped: %s\n", oneLine(err))
		} else {
			out = append(out, s)
		}
		for _, d := range c.floorWork {
			if s, err := newFloorWithWork(c.dir, d); err != nil {
				fmt.Printf("%s%v: skipped: %s\n", floorWithWork, d, oneLine(err))
			} else {
				out = append(out, s)
			}
		}
	}
	if wanted(c, "river") {
		if c.pgDSN == "" {
			fmt.Println("river: skipped: no PostgreSQL given (-pg; run.sh starts one)")
		} else if s, err := newRiver(ctx, c.pgDSN, c.pgPIDFile, c.riverCooldown, c.riverPoll); err != nil {
			fmt.Printf("river: skipped: PostgreSQL at %q: %s\n", c.pgDSN, oneLine(err))
		} else {
			out = append(out, s)
		}
	}
	if wanted(c, "asynq") {
		if c.redisAddr == "" {
			fmt.Println("asynq: skipped: no Redis given (-redis; run.sh starts one)")
		} else if s, err := newAsynq(ctx, c.redisAddr, c.redisPIDFile, c.asynqCheck); err != nil {
			fmt.Printf("asynq: skipped: Redis at %s: %s\n", c.redisAddr, oneLine(err))
		} else {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		log.Fatal("no system to measure")
	}
	return out
}

// oneLine is err's text on one line (pgx names each address tried on a
// line of its own).
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// measureRound measures one system once: enqueue one at a time, drain at
// 1, enqueue in batches (or, without a batch call, one at a time again,
// unmeasured), drain at c.parallel, then latency.
func measureRound(ctx context.Context, c config, s system, r *systemResults) error {
	if err := s.reset(ctx); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	start := time.Now()
	if err := s.enqueueOne(ctx, c.jobs); err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	r.add(rowEnqueueOne, float64(c.jobs)/time.Since(start).Seconds())
	if err := measureDrain(ctx, c, s, r, 1); err != nil {
		return err
	}

	start = time.Now()
	ok, err := s.enqueueBatch(ctx, c.jobs, c.batch)
	if err != nil {
		return fmt.Errorf("batched enqueue: %w", err)
	}
	if ok {
		r.add(rowEnqueueBatch, float64(c.jobs)/time.Since(start).Seconds())
	} else if err := s.enqueueOne(ctx, c.jobs); err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	if err := measureDrain(ctx, c, s, r, c.parallel); err != nil {
		return err
	}

	lat, err := s.latency(ctx, c.latencySamples)
	if err != nil {
		return fmt.Errorf("latency: %w", err)
	}
	r.latencies = append(r.latencies, lat...)
	return nil
}

// cpuUsed is the CPU time used so far by this process and by s's server.
func cpuUsed(s system) (self, server time.Duration, err error) {
	if self, err = selfCPU(); err != nil {
		return 0, 0, err
	}
	server, err = s.serverCPU()
	return self, server, err
}

// measureDrain times a drain of c.jobs at parallel, and the CPU time it
// used per job: this process's and the server's, and the whole machine's
// (what its CPUs spent busy meanwhile, on anything: kernel threads such as
// a file system's journal are counted there alone), with the share of the
// CPUs' time that was busy.
func measureDrain(ctx context.Context, c config, s system, r *systemResults, parallel int) error {
	self0, srv0, err := cpuUsed(s)
	if err != nil {
		return err
	}
	busy0, all0, err := machineCPU()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := s.drain(ctx, c.jobs, parallel); err != nil {
		return fmt.Errorf("drain at %d: %w", parallel, err)
	}
	elapsed := time.Since(start)
	busy1, all1, err := machineCPU()
	if err != nil {
		return err
	}
	self1, srv1, err := cpuUsed(s)
	if err != nil {
		return err
	}
	perJob := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(c.jobs) }
	rows := drainRowsFor(parallel != 1)
	r.add(rows.rate, float64(c.jobs)/elapsed.Seconds())
	r.add(rows.cpuSelf, perJob(self1-self0))
	r.add(rows.cpuServer, perJob(srv1-srv0))
	r.add(rows.cpuTotal, perJob(self1-self0+srv1-srv0))
	r.add(rows.machineCPU, perJob(busy1-busy0))
	if all1 > all0 {
		r.add(rows.busy, 100*float64(busy1-busy0)/float64(all1-all0))
	}
	return nil
}
