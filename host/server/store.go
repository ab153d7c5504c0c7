package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/postgres"
	"github.com/runedge/runedge/runner/store/sqlite"
)

// OpenStore opens the configured run store. A PostgreSQL that cannot be
// reached or refuses the credentials fails here, at start, with the field
// the DSN came from; a password written into store.dsn draws a warning.
func OpenStore(ctx context.Context, cfg *config.Config, log *slog.Logger) (runner.Store, error) {
	sc := cfg.Store
	switch sc.Driver {
	case "postgres":
		if sc.DSNHasPassword() && log != nil {
			log.Warn("store.dsn holds a password, so the configuration file does: put the DSN in an environment variable and name it in store.dsn_env")
		}
		st, err := postgres.Open(ctx, sc.PostgresDSN(), postgres.Options{
			CommitWindow: sc.CommitWindow.Std(), CommitBatch: sc.CommitBatch, Logger: log,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.DSNField(), err)
		}
		return st, nil
	default:
		st, err := sqlite.OpenWith(ctx, cfg.Path(sc.Path), sqlite.Options{
			CommitWindow: sc.CommitWindow.Std(), CommitBatch: sc.CommitBatch,
		})
		if err != nil {
			return nil, fmt.Errorf("store.path: %w", err)
		}
		return st, nil
	}
}

// startPurge starts purgeLoop, cut off from ctx's cancellation (the
// server stops it), and returns the func that stops it and waits until it
// has returned: a purge in flight ends before the store is closed.
func startPurge(ctx context.Context, st runner.Store, retention time.Duration, log *slog.Logger) (stop func()) {
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		purgeLoop(pctx, st, retention, log)
	}()
	return func() {
		cancel()
		<-done
	}
}

// purgeLoop applies store.retention: every tenth of the retention period
// (at most hourly) it empties the stored input and output of runs that
// ended longer ago than retention. It stops with ctx.
func purgeLoop(ctx context.Context, st runner.Store, retention time.Duration, log *slog.Logger) {
	every := min(retention/10, time.Hour)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := st.PurgeBefore(ctx, time.Now().Add(-retention).Unix())
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("store.retention: purge failed; retrying later", "err", err)
		case n > 0:
			log.Info("store.retention: purged input and output of old runs", "runs", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// historyOf returns the store's response history, which the timing wrapper
// does not carry; nil if the store keeps none.
func historyOf(st runner.Store) runner.HistoryStore {
	h, _ := st.(runner.HistoryStore)
	return h
}

// probeOf returns st's history probe, nil when it has none.
func probeOf(st runner.Store) runner.HistoryProbe {
	p, _ := st.(runner.HistoryProbe)
	return p
}

// conversationsOf returns st's conversations, nil when it keeps none.
func conversationsOf(st runner.Store) runner.ConversationStore {
	c, _ := st.(runner.ConversationStore)
	return c
}
