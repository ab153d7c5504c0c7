package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// goal is one target of the performance contract (docs: performance),
// checked against a runedge target's results in this run.
type goal struct {
	what     string
	scenario string
	// driver limits the goal to runedge targets on this store ("" any).
	driver string
	// measure returns the figure, its text, and whether it is known.
	measure func(t, proxy measured, direct loadResult) (float64, string, bool)
	limit   float64
	unit    string
}

// cpuRatio is the target's CPU per request as a multiple of the proxy's.
func cpuRatio(t, proxy measured, _ loadResult) (float64, string, bool) {
	if proxy.cpuPerReq <= 0 || t.cpuPerReq <= 0 {
		return 0, "-", false
	}
	r := float64(t.cpuPerReq) / float64(proxy.cpuPerReq)
	return r, fmt.Sprintf("%.2fx (%d / %d µs)", r, t.cpuPerReq.Microseconds(), proxy.cpuPerReq.Microseconds()), true
}

// addedMs is the latency percentile q the target adds to the upstream's.
func addedMs(q float64) func(t, proxy measured, direct loadResult) (float64, string, bool) {
	return func(t, _ measured, direct loadResult) (float64, string, bool) {
		if len(t.latencies) == 0 || len(direct.latencies) == 0 {
			return 0, "-", false
		}
		ms := float64(t.pct(q)-direct.pct(q)) / float64(time.Millisecond)
		return ms, fmt.Sprintf("%.2f ms", ms), true
	}
}

func peakMiB(t, _ measured, _ loadResult) (float64, string, bool) {
	if t.rss <= 0 {
		return 0, "-", false
	}
	mib := float64(t.rss) / (1 << 20)
	return mib, fmt.Sprintf("%.1f MiB", mib), true
}

// bareRatio is the target's CPU per request as a multiple of the bare Go
// handler's (the mock upstream called directly) in the same scenario.
func bareRatio(t, _ measured, direct loadResult) (float64, string, bool) {
	if direct.cpuPerReq <= 0 || t.cpuPerReq <= 0 {
		return 0, "-", false
	}
	r := float64(t.cpuPerReq) / float64(direct.cpuPerReq)
	return r, fmt.Sprintf("%.2fx (%d / %d µs)", r, t.cpuPerReq.Microseconds(), direct.cpuPerReq.Microseconds()), true
}

// offlineTarget names the runedge target served as `make run` serves it.
const offlineTarget = "offline"

// goals are the targets runedge is held to. A goal's driver selects the
// runedge targets it applies to by name ("sqlite" is runedge/sqlite and
// its wasm variant; "offline" the `make run` target).
var goals = []goal{
	{"CPU per request, SQLite", "non-stream, 32 conns", "sqlite", cpuRatio, 1.5, "x proxy"},
	{"CPU per request, PostgreSQL", "non-stream, 32 conns", "postgres", cpuRatio, 2.0, "x proxy"},
	{"CPU per stream, SQLite", "stream, 32 conns", "sqlite", cpuRatio, 1.5, "x proxy"},
	{"p50 added, 1 conn, SQLite", "non-stream, 1 conn", "sqlite", addedMs(0.5), 0.5, "ms"},
	{"p99 added, 1 conn, SQLite", "non-stream, 1 conn", "sqlite", addedMs(0.99), 1.0, "ms"},
	{"peak RSS, 128 conns", "non-stream, 128 conns", "", peakMiB, 64, "MiB"},
	{"make run CPU per request, 32 conns", "non-stream, 32 conns", offlineTarget, bareRatio, 3.0, "x bare handler"},
	{"make run CPU per request, 1 conn", "non-stream, 1 conn", offlineTarget, bareRatio, 3.0, "x bare handler"},
	{"CPU per agent-sized request, 1 conn, SQLite", "agent, 1 conn", "sqlite", cpuRatio, 3.0, "x proxy"},
	{"CPU per agent-sized request, 32 conns, SQLite", "agent, 32 conns", "sqlite", cpuRatio, 3.0, "x proxy"},
	{"CPU per agent-sized request, 32 conns, PostgreSQL", "agent, 32 conns", "postgres", cpuRatio, 3.0, "x proxy"},
	{"peak RSS, agent-sized, 32 conns", "agent, 32 conns", "", peakMiB, 64, "MiB"},
}

// roundResult is one round's results: per target, per scenario; and the
// upstream's own, per scenario.
type roundResult struct {
	res    map[string]map[string]measured
	direct map[string]loadResult
}

// snapshot copies the targets' results of the round just run.
func snapshot(targets []*target, direct map[string]loadResult) roundResult {
	r := roundResult{res: map[string]map[string]measured{}, direct: direct}
	for _, t := range targets {
		r.res[t.name] = maps.Clone(t.res)
	}
	return r
}

// printGoals prints each goal for each runedge target whose scenario ran:
// the median over the rounds of its figure, each round's, the limit, and
// whether the median meets it.
func printGoals(targets []*target, rounds []roundResult) {
	fmt.Printf("\ntargets (median of %d round(s)):\n", len(rounds))
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "goal\ttarget\tmedian\trounds\tlimit\tverdict")
	proxy := targets[0]
	for _, g := range goals {
		if _, ran := rounds[0].direct[g.scenario]; !ran {
			continue
		}
		for _, t := range targets[1:] {
			if g.driver != "" && !strings.HasPrefix(t.name, "runedge/"+g.driver) {
				continue
			}
			var vals []float64
			var texts []string
			for _, r := range rounds {
				v, text, ok := g.measure(r.res[t.name][g.scenario], r.res[proxy.name][g.scenario], r.direct[g.scenario])
				if ok {
					vals = append(vals, v)
				}
				texts = append(texts, text)
			}
			median, verdict := "-", "unknown"
			if len(vals) > 0 {
				slices.Sort(vals)
				m := vals[len(vals)/2]
				if len(vals)%2 == 0 {
					m = (vals[len(vals)/2-1] + m) / 2
				}
				median = strconv.FormatFloat(m, 'f', 2, 64)
				verdict = map[bool]string{true: "met", false: "NOT met"}[m <= g.limit]
			}
			fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s\t<= %g %s\t%s\n", g.what, t.name, median, g.unit,
				strings.Join(texts, "; "), g.limit, g.unit, verdict)
		}
	}
	tw.Flush()
}

// find returns the target named name, or nil.
func find(targets []*target, name string) *target {
	for _, t := range targets {
		if t.name == name {
			return t
		}
	}
	return nil
}
