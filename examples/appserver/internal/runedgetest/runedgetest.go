// Package runedgetest starts a real runedge for the example's tests: the
// server of host/server on 127.0.0.1:0, a SQLite file, the offline
// provider and the default mapping plugin built from source. The example's
// own code never imports runedge; only its tests do, to prove the proxy
// against the real thing rather than a fake.
package runedgetest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
	"github.com/runedge/runedge/host/server/servertest"
	"github.com/runedge/runedge/runner"
)

// Token is the unbound bearer token of every test runedge. It is long and
// distinctive so that a test can search everything a browser received
// for it.
const Token = "rk_appserver-test-token-9f8e7d6c5b4a"

// Runedge is a running runedge.
type Runedge struct {
	URL string
	t   testing.TB
}

// Start starts runedge; the offline provider sleeps tokenDelay between
// streamed tokens; opts change the configuration further. It stops when
// the test ends.
func Start(t testing.TB, tokenDelay time.Duration, opts ...func(*config.Config)) *Runedge {
	t.Helper()
	cfg := configtest.New(t)
	cfg.Admin.Listen = "off"
	cfg.Provider.Offline.TokenDelay = config.Dur(tokenDelay)
	cfg.Tokens = []config.Token{{Name: "appserver", Hash: auth.HashToken(Token)}}
	for _, o := range opts {
		o(cfg)
	}
	srv := servertest.Start(t, context.Background(), cfg)
	return &Runedge{URL: srv.URL, t: t}
}

// Run reads run id through the native API, acting for tenant.
func (r *Runedge) Run(id, tenant string) runner.Run {
	r.t.Helper()
	var run runner.Run
	r.get("/runner/v1/runs/"+id, tenant, &run)
	return run
}

// Runs lists the newest runs of tenant.
func (r *Runedge) Runs(tenant string) []runner.Run {
	r.t.Helper()
	var list struct{ Data []runner.Run }
	r.get("/runner/v1/runs?limit=100", tenant, &list)
	return list.Data
}

// WaitRun polls run id until cond holds, failing the test after 10 s.
func (r *Runedge) WaitRun(id, tenant string, cond func(runner.Run) bool) runner.Run {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		run := r.Run(id, tenant)
		if cond(run) {
			return run
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("run %s never reached the expected state; last: %+v", id, run)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *Runedge) get(path, tenant string, into any) {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodGet, r.URL+path, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+Token)
	req.Header.Set("X-Service-Tenant-Id", tenant)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		r.t.Fatalf("GET %s: %d %s", path, res.StatusCode, strings.TrimSpace(string(b)))
	}
	if err := json.Unmarshal(b, into); err != nil {
		r.t.Fatalf("GET %s: %v", path, err)
	}
}
