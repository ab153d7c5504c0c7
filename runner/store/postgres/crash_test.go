package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/postgres"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
	"github.com/runedge/runedge/runner/store/storetest"
)

const crashDSNEnv = "RUNEDGE_CRASH_PG_DSN"

func TestMain(m *testing.M) {
	if os.Getenv(storetest.CrashChildEnv) != "" {
		s, err := postgres.Open(context.Background(), os.Getenv(crashDSNEnv), postgres.Options{CommitWindow: postgres.DefaultCommitWindow})
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
	dsn := pgtest.Schema(t)
	storetest.Crash(t, []string{crashDSNEnv + "=" + dsn}, func(t *testing.T) runner.Store {
		s, err := postgres.Open(t.Context(), dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
