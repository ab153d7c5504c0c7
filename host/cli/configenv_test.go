package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigReadsOTELEnv: the OTEL_* variables are read where the
// configuration is loaded: `config check` refuses a bad one, naming it, and
// loadConfig turns tracing on from the endpoint variable alone.
func TestConfigReadsOTELEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runedge.yaml")
	if err := os.WriteFile(path, []byte("listen: 127.0.0.1:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	envOf := func(vars map[string]string) (Env, *bytes.Buffer) {
		var e bytes.Buffer
		return Env{Stdout: io.Discard, Stderr: &e, Getenv: func(k string) string { return vars[k] }}, &e
	}
	env, errOut := envOf(map[string]string{"OTEL_TRACES_SAMPLER": "sometimes"})
	if code := Main(context.Background(), []string{"config", "check", "--config", path}, env); code == 0 || !strings.Contains(errOut.String(), "OTEL_TRACES_SAMPLER") {
		t.Fatalf("config check: exit %d, %s", code, errOut)
	}
	env, _ = envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4318"})
	for _, p := range []string{path, ""} {
		cfg, err := loadConfig(p, env)
		if err != nil || !cfg.Tracing.Enabled() || cfg.Tracing.Endpoint != "http://otel:4318" {
			t.Fatalf("%q: tracing %+v %v", p, cfg.Tracing, err)
		}
	}
}
