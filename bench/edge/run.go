package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runedge/runedge/bench/mockupstream"
)

const benchToken = "bench-edge-token"

// scenario is one load shape.
type scenario struct {
	name   string
	stream bool
	conns  int
	// agent sends an agent-sized body (mockupstream.AgentChat: a
	// 400-message history, about 230 KB) instead of a one-line one.
	agent bool
}

var scenarios = []scenario{
	{"non-stream, 1 conn", false, 1, false},
	{"non-stream, 32 conns", false, 32, false},
	{"stream, 1 conn", true, 1, false},
	{"stream, 32 conns", true, 32, false},
	{"non-stream, 128 conns", false, 128, false},
	{"agent, 1 conn", false, 1, true},
	{"agent, 32 conns", false, 32, true},
}

// body is what sc sends to a target serving model.
func (sc scenario) body(model string) []byte {
	if sc.agent {
		return mockupstream.AgentChat(model, sc.stream)
	}
	if sc.stream {
		return []byte(`{"model":"` + model + `","stream":true,"messages":[{"role":"user","content":"hello"}]}`)
	}
	return []byte(`{"model":"` + model + `","messages":[{"role":"user","content":"hello"}]}`)
}

// target is a process under load.
type target struct {
	name   string
	url    string // the chat completions URL
	admin  string // runedge's admin listener (with -profile), for its profiles
	cmd    *exec.Cmd
	driver string // runedge's store driver ("" for the proxy)
	// results per scenario
	res map[string]measured
	// rss is the peak RSS over the process's life (its start included,
	// where a cold plugin compile may peak), read before the first scenario
	// resets the high-water mark, then raised by each scenario's peak.
	rss int64
}

type measured struct {
	loadResult
	cpuPerReq time.Duration
	// dbPerReq is the PostgreSQL server's CPU per request (targets on
	// PostgreSQL only, both of twins; 0 when it could not be read).
	dbPerReq time.Duration
	// rss is the target's peak RSS during the scenario (warm-up included),
	// 0 when it could not be read.
	rss int64
}

func runBench(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	runedge := fs.String("runedge", "bin/runedge", "the runedge binary")
	runedgeB := fs.String("runedge-b", "", "a second runedge binary (the build before a change): each runedge target is also started from it, named with a -b suffix, and measured right after its twin in every round, so that two builds meet the same load")
	d := fs.Duration("duration", 3*time.Second, "measured time per scenario and target")
	warm := fs.Duration("warmup", 500*time.Millisecond, "warm-up per scenario and target")
	pgEnv := fs.String("pg-dsn-env", "RUNEDGE_BENCH_PG_DSN", "variable holding a PostgreSQL DSN (empty: SQLite only)")
	profile := fs.String("profile", "", "write a CPU profile of each runedge target per scenario into this folder, and a heap profile and /proc smaps_rollup taken near the end of the measured interval")
	traceIt := fs.Bool("trace", false, "with -profile: take an execution trace (runtime/trace, for go tool trace) of each runedge target per scenario instead of a CPU profile")
	only := fs.String("scenarios", "", "run only the scenarios whose name matches this regular expression, unanchored: a plain substring (\"1 conn\") or alternatives (\"128 conns|agent, 32\"); the selected ones run in the whole run's order")
	drv := fs.String("drivers", "sqlite,postgres", "the stores to measure runedge with")
	mappings := fs.String("mappings", "native", "the default mapping's builds to measure runedge with: native (the built-in, the default), wasm (its WebAssembly build), or both (native,wasm); each is a target per driver")
	offline := fs.Bool("offline", true, "also measure runedge as `make run` serves it (offline provider, SQLite, the native default) against the mock upstream called directly, a bare Go handler")
	rounds := fs.Int("rounds", 1, "run every scenario this many times, alternating (a table per round); the targets are checked on the medians")
	cacheDir := fs.String("plugin-cache", "", "runedge's plugins.cache_dir (default: a new, empty one, so the first runedge compiles the plugins cold and the next loads them from its disk cache)")
	pgVacuum := fs.Bool("pg-vacuum", true, "after each PostgreSQL target's scenario, vacuum and analyze the whole database (VACUUM (ANALYZE, SKIP_LOCKED): a table another session has locked is skipped, not waited for) before the next target is measured, so that its upkeep is done in its own turn rather than by autovacuum in another target's interval")
	extraFile := fs.String("config-extra", "", "a YAML file appended to every runedge target's configuration (sections the generated file has not: usage, actors, …)")
	fs.Parse(args)
	selected, err := regexp.Compile(*only)
	if err != nil {
		return fmt.Errorf("-scenarios: %w", err)
	}
	var extra string
	if *extraFile != "" {
		b, err := os.ReadFile(*extraFile)
		if err != nil {
			return err
		}
		extra = "\n" + string(b)
	}
	if *profile != "" {
		if err := os.MkdirAll(*profile, 0o755); err != nil {
			return err
		}
	}

	self, err := os.Executable()
	if err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-edge")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pin := pinner()

	upAddr := freeAddr()
	up, err := startChild(pin, dir, "upstream", self, "upstream", "--listen", upAddr)
	if err != nil {
		return err
	}
	defer stop(up)
	upURL := "http://" + upAddr
	if err := waitHTTP(upURL + "/v1/models"); err != nil {
		return err
	}
	proxyAddr := freeAddr()
	pc, err := startChild(pin, dir, "proxy", self, "proxy", "--listen", proxyAddr, "--upstream", upURL)
	if err != nil {
		return err
	}
	defer stop(pc)
	if err := waitHTTP("http://" + proxyAddr + "/v1/models"); err != nil {
		return err
	}
	targets := []*target{{name: "proxy", url: "http://" + proxyAddr + "/v1/chat/completions", cmd: pc}}

	var drivers []string
	for _, d := range strings.Split(*drv, ",") {
		if d == "sqlite" || d == "postgres" && os.Getenv(*pgEnv) != "" {
			drivers = append(drivers, d)
		}
	}
	// startRunedgeOf starts bin as the runedge target name.
	startRunedgeOf := func(bin, name, drv, mapping, upURL string) error {
		addr, admin := freeAddr(), ""
		if *profile != "" {
			admin = freeAddr()
		}
		cfg, err := writeRunedgeConfig(dir, root, name, drv, mapping, addr, admin, upURL, *pgEnv, cmp.Or(*cacheDir, filepath.Join(dir, "cache")), extra)
		if err != nil {
			return err
		}
		rc, err := startChild(pin, dir, "runedge-"+name, bin, "serve", "--config", cfg)
		if err != nil {
			return err
		}
		if err := waitHTTP("http://" + addr + "/v1/models"); err != nil {
			stop(rc)
			return fmt.Errorf("runedge (%s): %w; see %s", name, err, filepath.Join(dir, "runedge-"+name+".log"))
		}
		targets = append(targets, &target{name: "runedge/" + name, url: "http://" + addr + "/v1/chat/completions", admin: admin, cmd: rc, driver: drv})
		return nil
	}
	// startRunedge starts a runedge target, and its twin from -runedge-b;
	// upURL "" is the offline provider.
	startRunedge := func(name, drv, mapping, upURL string) error {
		if err := startRunedgeOf(*runedge, name, drv, mapping, upURL); err != nil || *runedgeB == "" {
			return err
		}
		return startRunedgeOf(*runedgeB, name+"-b", drv, mapping, upURL)
	}
	defer func() {
		for _, t := range targets[1:] {
			stop(t.cmd)
		}
	}()
	for _, drv := range drivers {
		for _, mapping := range strings.Split(*mappings, ",") {
			name := drv
			if mapping != "native" {
				name += "-" + mapping
			}
			if err := startRunedge(name, drv, mapping, upURL); err != nil {
				return err
			}
		}
	}
	if *offline {
		if err := startRunedge(offlineTarget, "sqlite", "native", ""); err != nil {
			return err
		}
	}

	ctx := context.Background()
	var pg *pgServer
	if slices.Contains(drivers, "postgres") {
		if pg, err = dialPG(ctx, os.Getenv(*pgEnv)); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		defer pg.close()
	}
	var results []roundResult
	for round := range *rounds {
		if *rounds > 1 {
			fmt.Fprintf(os.Stderr, "round %d of %d\n", round+1, *rounds)
		}
		direct := map[string]loadResult{}
		for _, sc := range scenarios {
			if !selected.MatchString(sc.name) {
				continue
			}
			body := sc.body("service")
			fmt.Fprintf(os.Stderr, "%s: upstream", sc.name)
			// The upstream called directly is the bare Go handler `make
			// run` is held against: its CPU per request is read too.
			var upBefore, upAfter time.Duration
			dr := load{url: upURL + "/v1/chat/completions", body: body, conns: sc.conns, warmup: *warm, d: *d}.
				run(ctx, func() { upBefore, _ = cpuTime(up.Process.Pid) }, func() { upAfter, _ = cpuTime(up.Process.Pid) })
			if dr.requests > 0 && upAfter > upBefore {
				dr.cpuPerReq = (upAfter - upBefore) / time.Duration(dr.requests)
			}
			direct[sc.name] = dr
			for _, t := range targets {
				fmt.Fprintf(os.Stderr, ", %s", t.name)
				if hwm, err := peakRSS(t.cmd.Process.Pid); err == nil {
					t.rss = max(t.rss, hwm)
				}
				rssReset := resetPeakRSS(t.cmd.Process.Pid) == nil
				var before, after time.Duration
				var dbBefore, dbAfter map[int]time.Duration
				db := pg != nil && t.onPostgres()
				pid := t.cmd.Process.Pid
				var prof chan error
				// base names this target's and scenario's files under -profile.
				base := filepath.Join(*profile, strings.NewReplacer(", ", "-", " ", "", "/", "-").Replace(t.name+"-"+sc.name))
				r := load{url: t.url, token: benchToken, body: body, conns: sc.conns, warmup: *warm, d: *d}.run(ctx,
					func() {
						if db {
							dbBefore, _ = pg.cpu(ctx)
						}
						before, _ = cpuTime(pid)
						if t.admin != "" {
							prof = make(chan error, 1)
							kind, file := "profile", base+".pprof"
							if *traceIt {
								kind, file = "trace", base+".trace"
							}
							go func() { prof <- takeProfile(t.admin, kind, *d, file) }()
							go func() {
								// Near the end of the interval, under load: where the peak is.
								time.Sleep(*d * 9 / 10)
								if err := takeMemory(t.admin, pid, base); err != nil {
									fmt.Fprintf(os.Stderr, "\nmemory snapshot of %s: %v\n", t.name, err)
								}
							}()
						}
					}, func() {
						after, _ = cpuTime(pid)
						if db {
							dbAfter, _ = pg.cpu(ctx)
						}
					})
				if prof != nil {
					if err := <-prof; err != nil {
						return fmt.Errorf("profile of %s: %w", t.name, err)
					}
					// The histograms (request, plugin call, store commit) say
					// which stage a tail comes from; they count since start.
					b, err := adminGet(t.admin, "/metrics")
					if err == nil {
						err = os.WriteFile(base+".metrics", b, 0o644)
					}
					if err != nil {
						fmt.Fprintf(os.Stderr, "\nmetrics of %s: %v\n", t.name, err)
					}
				}
				if t.res == nil {
					t.res = map[string]measured{}
				}
				m := measured{loadResult: r}
				if hwm, err := peakRSS(pid); err == nil {
					t.rss = max(t.rss, hwm)
					if rssReset {
						m.rss = hwm
					}
				}
				if r.requests > 0 {
					m.cpuPerReq = (after - before) / time.Duration(r.requests)
					if dbBefore != nil && dbAfter != nil {
						m.dbPerReq = cpuSince(dbBefore, dbAfter) / time.Duration(r.requests)
					}
				}
				t.res[sc.name] = m
				if db && *pgVacuum {
					if _, err := pg.vacuum(ctx); err != nil {
						return fmt.Errorf("postgres: vacuum after %s: %w (-pg-vacuum=false skips it)", t.name, err)
					}
				}
			}
			fmt.Fprintln(os.Stderr)
		}
		results = append(results, snapshot(targets, direct))
		if *rounds > 1 {
			fmt.Printf("round %d of %d\n", round+1, *rounds)
			report(os.Stdout, targets, direct, pin != nil, "")
		}
	}
	for _, t := range targets {
		if hwm, err := peakRSS(t.cmd.Process.Pid); err == nil {
			t.rss = max(t.rss, hwm)
		}
	}
	pgCPUs := ""
	if pg != nil {
		pgCPUs = pg.cpus(ctx)
	}
	if *rounds == 1 {
		report(os.Stdout, targets, results[0].direct, pin != nil, pgCPUs)
	} else if pgCPUs != "" {
		fmt.Printf("\nPostgreSQL server on CPUs %s (db CPU: its processes' CPU per request)\n", pgCPUs)
	}
	printGoals(targets, results)
	return nil
}

// onPostgres reports whether t is a runedge on PostgreSQL, whose
// server's CPU is read around each of its scenarios (a -runedge-b twin's
// too, named with its -b suffix).
func (t *target) onPostgres() bool { return t.driver == "postgres" }

// report prints the table to w; pgCPUs is the CPU list the PostgreSQL
// server may run on ("" without one).
func report(w io.Writer, targets []*target, direct map[string]loadResult, pinned bool, pgCPUs string) {
	fmt.Fprintf(w, "bench-edge: %s, %d CPUs (%s), Go %s; load and targets %s\n\n", cpuModel(), machineCPUs(),
		runtime.GOARCH, strings.TrimPrefix(runtime.Version(), "go"),
		map[bool]string{true: "on separate cores (taskset)", false: "NOT pinned (one core or no taskset)"}[pinned])
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\ttarget\treq/s\tCPU µs/req\tx proxy\tp50 added\tp99 added\terrors\tdb CPU µs/req\tpeak RSS MiB\t")
	proxy := targets[0]
	for _, sc := range scenarios {
		base, ok := direct[sc.name]
		if !ok {
			continue // not selected (-scenarios)
		}
		for _, t := range targets {
			m := t.res[sc.name]
			ratio := "-"
			if p := proxy.res[sc.name].cpuPerReq; p > 0 && t != proxy {
				ratio = fmt.Sprintf("%.2fx", float64(m.cpuPerReq)/float64(p))
			}
			db := "-"
			if m.dbPerReq > 0 {
				db = strconv.FormatInt(m.dbPerReq.Microseconds(), 10)
			}
			rss := "-"
			if m.rss > 0 {
				rss = fmt.Sprintf("%.1f", float64(m.rss)/(1<<20))
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t\n", sc.name, t.name, m.rps(), m.cpuPerReq.Microseconds(), ratio,
				added(m.pct(0.5), base.pct(0.5)), added(m.pct(0.99), base.pct(0.99)), m.errors, db, rss)
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, t := range targets {
		fmt.Fprintf(w, "peak RSS since start %-16s %6.1f MiB\n", t.name, float64(t.rss)/(1<<20))
	}
	if pgCPUs != "" {
		fmt.Fprintf(w, "\nPostgreSQL server on CPUs %s (db CPU: its processes' CPU per request)\n", pgCPUs)
	}
	if s, p := find(targets, "runedge/sqlite"), find(targets, "runedge/postgres"); s != nil && p != nil {
		s, p := s.res["non-stream, 32 conns"], p.res["non-stream, 32 conns"]
		if s.rps() > 0 && p.rps() > 0 {
			fmt.Fprintf(w, "\nthroughput at 32 connections, postgres / sqlite: %.0f%%\n", 100*p.rps()/s.rps())
		}
	}
}

func added(d, base time.Duration) string {
	return fmt.Sprintf("%.2fms", float64(d-base)/float64(time.Millisecond))
}
