package postgres

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestSSLModeDefault: a DSN that reaches a host over the network with no
// sslmode (in the DSN or PGSSLMODE) is verify-full: TLS, the chain and the
// host name checked, no plaintext fallback. An sslmode the operator gave,
// and a loopback host or Unix socket, keep what pgx makes of them.
func TestSSLModeDefault(t *testing.T) {
	for _, c := range []struct {
		dsn, env   string
		verifyFull bool
	}{
		{"postgres://runedge@db.internal:5432/runs", "", true},
		{"postgresql://runedge@10.0.0.5/runs?pool_max_conns=4", "", true},
		{"host=db.internal user=runedge dbname=runs", "", true},
		{"postgres://runedge@db-a.internal,db-b.internal/runs", "", true},
		{"postgres://runedge@localhost/runs", "", false},
		{"postgres://runedge@127.0.0.1:5432/runs", "", false},
		{"postgres://runedge@[::1]:5432/runs", "", false},
		{"host=/var/run/postgresql user=runedge", "", false},
		{"postgres://runedge@db.internal/runs?sslmode=disable", "", false},
		{"host=db.internal sslmode=require user=runedge", "", false},
		{"postgres://runedge@db.internal/runs", "require", false},
	} {
		cfg, err := parseDSN(c.dsn, c.env)
		if err != nil {
			t.Fatalf("%s: %v", c.dsn, err)
		}
		cc := cfg.ConnConfig
		verifyFull := cc.TLSConfig != nil && !cc.TLSConfig.InsecureSkipVerify && cc.TLSConfig.ServerName == cc.Host
		for _, fb := range cc.Fallbacks {
			verifyFull = verifyFull && fb.TLSConfig != nil && !fb.TLSConfig.InsecureSkipVerify
		}
		if verifyFull != c.verifyFull {
			t.Errorf("%s (PGSSLMODE %q): verify-full %v, want %v", c.dsn, c.env, verifyFull, c.verifyFull)
		}
	}
}

// TestSSLModeKeepsParameters: adding sslmode leaves the DSN's other
// parameters as they were.
func TestSSLModeKeepsParameters(t *testing.T) {
	cfg, err := parseDSN("postgres://runedge@db.internal/runs?application_name=edge%20one&connect_timeout=3", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.ConnConfig.RuntimeParams["application_name"]; got != "edge one" || cfg.ConnConfig.ConnectTimeout.Seconds() != 3 {
		t.Fatalf("application_name %q, connect timeout %v", got, cfg.ConnConfig.ConnectTimeout)
	}
	if cfg.ConnConfig.TLSConfig == nil || cfg.ConnConfig.TLSConfig.InsecureSkipVerify {
		t.Fatal("not verify-full")
	}
}

// TestPlaintextWarned: Open warns, naming the host, when PostgreSQL
// traffic may cross the network without TLS; a loopback host does not.
func TestPlaintextWarned(t *testing.T) {
	for _, c := range []struct {
		dsn  string
		warn bool
	}{
		{"postgres://runedge@192.0.2.1:5432/runs?sslmode=disable&connect_timeout=1", true},
		{"postgres://runedge@192.0.2.1:5432/runs?sslmode=prefer&connect_timeout=1", true},
		{"postgres://runedge@127.0.0.1:1/runs?sslmode=disable&connect_timeout=1", false},
	} {
		var logs bytes.Buffer
		_, err := Open(context.Background(), c.dsn, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err == nil {
			t.Fatalf("%s: connected", c.dsn)
		}
		warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "192.0.2.1")
		if warned != c.warn {
			t.Errorf("%s: warned %v, want %v\n%s", c.dsn, warned, c.warn, logs.String())
		}
	}
}
