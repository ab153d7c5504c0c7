package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/runedge/runedge/runner"
)

// tracedStore makes each run store write on the request path a span:
// StartRun (the write before the agent starts) and Transition (the
// outcome), children of the run stage's span. A group-committing store
// shares one transaction between the writes of several runs; the span is
// the write call as its run waits for it, which is what a request's trace
// should show.
type tracedStore struct {
	runner.Store
	tracer trace.Tracer
	db     attribute.KeyValue
}

// tracedHistory does the same for the response history's writes.
type tracedHistory struct {
	runner.HistoryStore
	tracer trace.Tracer
	db     attribute.KeyValue
}

// TraceStore wraps the run store and the response history in spans when
// tracer is set; without it they are returned as they are.
func TraceStore(st runner.Store, h runner.HistoryStore, tracer trace.Tracer, driver string) (runner.Store, runner.HistoryStore) {
	if tracer == nil {
		return st, h
	}
	if driver == "" {
		driver = "sqlite"
	}
	if driver == "postgres" {
		driver = "postgresql" // the name the database conventions use
	}
	db := attribute.String("db.system.name", driver)
	if h != nil {
		h = keepJoiner(&tracedHistory{HistoryStore: h, tracer: tracer, db: db}, h)
	}
	return keepRelay(&tracedStore{Store: st, tracer: tracer, db: db}, st), h
}

// storeSpan opens the span of one store write of run runID.
func storeSpan(ctx context.Context, tracer trace.Tracer, db attribute.KeyValue, op, runID string, more ...attribute.KeyValue) (context.Context, trace.Span) {
	return tracer.Start(ctx, "store."+op, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(db, attribute.String("db.operation.name", op), attribute.String("service.run_id", runID)),
		trace.WithAttributes(more...))
}

// endStore ends a store span, failed when the write failed.
func endStore(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

func (t *tracedStore) StartRun(ctx context.Context, r *runner.Run, newSession, newThread bool) error {
	ctx, span := storeSpan(ctx, t.tracer, t.db, "start_run", r.ID,
		attribute.Bool("runedge.store.new_session", newSession), attribute.Bool("runedge.store.new_thread", newThread))
	err := t.Store.StartRun(ctx, r, newSession, newThread)
	endStore(span, err)
	return err
}

func (t *tracedStore) Transition(ctx context.Context, id string, tr runner.Transition) error {
	ctx, span := storeSpan(ctx, t.tracer, t.db, "transition", id, attribute.String("runedge.run.status", string(tr.Status)))
	err := t.Store.Transition(ctx, id, tr)
	endStore(span, err)
	return err
}

func (t *tracedHistory) BeginResponse(ctx context.Context, rec runner.ResponseRecord, input []runner.Item) error {
	ctx, span := storeSpan(ctx, t.tracer, t.db, "begin_response", rec.RunID)
	err := t.HistoryStore.BeginResponse(ctx, rec, input)
	endStore(span, err)
	return err
}

func (t *tracedHistory) EndResponse(ctx context.Context, runID string, object []byte, output []runner.Item) error {
	ctx, span := storeSpan(ctx, t.tracer, t.db, "end_response", runID)
	err := t.HistoryStore.EndResponse(ctx, runID, object, output)
	endStore(span, err)
	return err
}

func (t *tracedHistory) AppendEvents(ctx context.Context, runID string, lease int64, batch []runner.StoredEvent) error {
	ctx, span := storeSpan(ctx, t.tracer, t.db, "append_events", runID, attribute.Int("runedge.store.events", len(batch)))
	err := t.HistoryStore.AppendEvents(ctx, runID, lease, batch)
	endStore(span, err)
	return err
}

func (t *tracedHistory) DeleteResponse(ctx context.Context, tenantID, runID string) error {
	ctx, span := storeSpan(ctx, t.tracer, t.db, "delete_response", runID)
	err := t.HistoryStore.DeleteResponse(ctx, tenantID, runID)
	endStore(span, err)
	return err
}
