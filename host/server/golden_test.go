package server

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/config/configtest"
	goldenfile "github.com/runedge/runedge/internal/golden"
)

var (
	idRE   = regexp.MustCompile(`\b(chatcmpl-|resp_|msg_|fc_|run_|thread_|sess_)[A-Za-z0-9]+`)
	timeRE = regexp.MustCompile(`"(created|created_at|completed_at|started_at|ended_at)":\s?\d+`)
)

// normalise replaces ids and times, which differ on every run.
func normalise(b []byte) []byte {
	b = idRE.ReplaceAll(b, []byte("${1}ID"))
	return timeRE.ReplaceAll(b, []byte(`"$1":0`))
}

// golden compares got (normalised; indented when it is one JSON document)
// with testdata/golden/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	got = normalise(got)
	if json.Valid(got) {
		var buf bytes.Buffer
		if err := json.Indent(&buf, got, "", "  "); err != nil {
			t.Fatal(err)
		}
		got = append(buf.Bytes(), '\n')
	}
	goldenfile.Check(t, filepath.Join("testdata", "golden", name), got)
}

// eachMapping runs test as one subtest per build of the default mapping
// (configtest.Mappings: native and wasm), passing the change to make to a
// test server's configuration: clients must see the same bytes from both.
func eachMapping(t *testing.T, test func(t *testing.T, mapping func(*config.Config))) {
	for _, m := range configtest.Mappings {
		t.Run(m.Name, func(t *testing.T) {
			test(t, func(c *config.Config) { m.Apply(t, c) })
		})
	}
}
