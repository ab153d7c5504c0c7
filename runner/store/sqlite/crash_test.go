package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/sqlite"
	"github.com/runedge/runedge/runner/store/storetest"
)

const crashPathEnv = "RUNEDGE_CRASH_SQLITE_PATH"

func TestMain(m *testing.M) {
	if os.Getenv(storetest.CrashChildEnv) != "" {
		// Marks raised at every end, so that recovery scans from a mark
		// that moved while the child ran.
		s, err := sqlite.OpenWith(context.Background(), os.Getenv(crashPathEnv), sqlite.Options{MarkEvery: time.Nanosecond})
		if err != nil {
			panic(err)
		}
		storetest.CrashChild(s)
		return
	}
	os.Exit(m.Run())
}

// A process killed between (and during) group commits loses no
// acknowledged write.
func TestCrashLosesNoAcknowledgedRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.db")
	storetest.Crash(t, []string{crashPathEnv + "=" + path}, func(t *testing.T) runner.Store {
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
