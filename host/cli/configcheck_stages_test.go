package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `runedge config check` names a bad field of a section a stage owns
// (filters/<stage>/config.go) in full, as for the file's own fields, and
// says nothing is wrong with a good one.
func TestConfigCheckNamesStageFields(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range []struct{ doc, says string }{
		{"limits: {max_body_bytes: -1}", "limits.max_body_bytes: must be positive"},
		{"limits: {read_body_timeout: soon}", `limits.read_body_timeout: "soon" is not a duration`},
		{"actors: {missing: sometimes}", `actors.missing: want token or require, got "sometimes"`},
		{"limits: {burst: -3}", "limits.burst: must not be negative"},
		{"tools: {hosted: drop}", `tools.hosted: want withhold or refuse, got "drop"`},
		{"compaction: {keys: [{id: k1, secret_env: 'sk-not-a-name'}]}", "compaction.keys[0].secret_env: want the name of an environment variable"},
		{"limits: {sse_keepalive: 5ms}", "limits.sse_keepalive: 5ms is too short"},
		{"plugins: {stream_window: later}", `plugins.stream_window: "later" is not a duration`},
	} {
		path := filepath.Join(dir, "s"+string(rune('a'+i))+".yaml")
		if err := os.WriteFile(path, []byte(tc.doc+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := run(t, "config", "check", "--config", path); code != 1 || !strings.Contains(errOut, tc.says) {
			t.Errorf("%s: %d %s, want an error saying %q", tc.doc, code, errOut, tc.says)
		}
	}
	good := filepath.Join(dir, "good.yaml")
	doc := "limits: {max_body_bytes: 2048, sse_keepalive: 0s, burst: 2}\ntools: {hosted: refuse}\nplugins: {stream_window: 5ms, cache_dir: " + filepath.Join(dir, "cache") + "}\n"
	if err := os.WriteFile(good, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, "config", "check", "--config", good); code != 0 || !strings.Contains(out, "ok") {
		t.Errorf("good file: %d %s %s", code, out, errOut)
	}
}
