package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// Every runedge target on PostgreSQL reads the server's CPU, a -runedge-b
// twin (named with -b) as well as the build it is held against, and the
// table prints it for each of them; the proxy and SQLite targets read
// none and print "-".
func TestDBCPUForBothTwins(t *testing.T) {
	targets := []*target{
		{name: "proxy"},
		{name: "runedge/sqlite", driver: "sqlite"}, {name: "runedge/sqlite-b", driver: "sqlite"},
		{name: "runedge/postgres", driver: "postgres"}, {name: "runedge/postgres-b", driver: "postgres"},
		{name: "runedge/postgres-wasm", driver: "postgres"}, {name: "runedge/postgres-wasm-b", driver: "postgres"},
	}
	sc := scenarios[0].name
	lr := loadResult{requests: 100, elapsed: time.Second, latencies: []time.Duration{time.Millisecond}}
	want := map[string]string{}
	for i, tg := range targets {
		m := measured{loadResult: lr, cpuPerReq: time.Duration(100+i) * time.Microsecond}
		want[tg.name] = "-"
		if on := strings.HasPrefix(tg.name, "runedge/postgres"); tg.onPostgres() != on {
			t.Errorf("%s: reads the PostgreSQL server's CPU %v, want %v", tg.name, tg.onPostgres(), on)
		}
		if tg.onPostgres() {
			m.dbPerReq = time.Duration(700+i) * time.Microsecond
			want[tg.name] = strconv.Itoa(700 + i)
		}
		tg.res = map[string]measured{sc: m}
	}
	var b strings.Builder
	report(&b, targets, map[string]loadResult{sc: lr}, false, "1")
	got := map[string]string{}
	for _, line := range strings.Split(b.String(), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), sc)
		if !ok {
			continue
		}
		// target req/s CPU x-proxy p50 p99 errors db-CPU RSS
		f := strings.Fields(rest)
		if len(f) != 9 {
			t.Fatalf("row %q has %d cells after the scenario, want 9", line, len(f))
		}
		got[f[0]] = f[7]
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: db CPU µs/req %q, want %q\n%s", name, got[name], w, b.String())
		}
	}
}
