package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/runedge/runedge/runner"
)

// relayStore is a run store that can relay cancels; historyJoiner a
// response history that joins the run's writes.
type relayStore struct{ runner.Store }

func (relayStore) RelayCancel(context.Context, string, string) error { return nil }
func (relayStore) ListenCancels(context.Context, string, func(string)) error {
	return nil
}

type joiningHistory struct{ runner.HistoryStore }

func (joiningHistory) JoinBegin(ctx context.Context, _ runner.ResponseRecord, _ []runner.Item) (context.Context, func() bool) {
	return ctx, runner.NotJoined
}
func (joiningHistory) JoinEnd(ctx context.Context, _ string, _ int64, _ []byte, _ []runner.Item) (context.Context, func() bool) {
	return ctx, runner.NotJoined
}

// The metrics and tracing wrappers keep what the runner looks for on the
// store beneath (a cancel relay, a history that joins the run's commit),
// and promise nothing it does not have: turning telemetry on must not
// change how runs are cancelled or how many commits a response takes.
func TestDecoratorsKeepOptionalInterfaces(t *testing.T) {
	tracer := noop.NewTracerProvider().Tracer("test")
	m := NewMetrics(false)
	for _, tc := range []struct {
		name      string
		st        runner.Store
		h         runner.HistoryStore
		relay, jn bool
	}{
		{"plain", struct{ runner.Store }{}, struct{ runner.HistoryStore }{}, false, false},
		{"relay and joiner", relayStore{}, joiningHistory{}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, h := TraceStore(InstrumentStore(tc.st, m), tc.h, tracer, "sqlite")
			if _, ok := st.(runner.CancelRelay); ok != tc.relay {
				t.Errorf("store: CancelRelay %v, want %v", ok, tc.relay)
			}
			if _, ok := h.(runner.HistoryJoiner); ok != tc.jn {
				t.Errorf("history: HistoryJoiner %v, want %v", ok, tc.jn)
			}
		})
	}
}
