package sqlite

import (
	"database/sql"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/itemref"
)

// runColumns is the column list every run query selects (FROM runs), in
// scanRun's order. The recorded request is the run's or, when large,
// run_requests' (migration 14).
const runColumns = `id, status, status_reason, session_id, thread_id,
	actor_id, actor_type, actor_name, tenant_id, endpoint, model,
	request_id, correlation_id, created_at, started_at, ended_at,
	input_tokens, output_tokens, total_tokens, error_code, error_message,
	COALESCE(runs.request, (SELECT q.request FROM run_requests q WHERE q.seq = runs.seq)), output, attempts, duration_ms, ttft_ms, host_id, trace_id,
	lease_token, ` + outputRefColumn

// outputRefColumn is the stored message of the first output item of a run
// whose output text is kept there (output_ref, itemref.OutputElided), NULL
// for the others.
const outputRefColumn = `CASE WHEN runs.output_ref <> 0 THEN (SELECT i.message FROM response_items i
	WHERE i.run_id = runs.id AND i.output <> 0 ORDER BY i.position LIMIT 1) END`

type scanner interface{ Scan(dest ...any) error }

func scanRun(row scanner) (runner.Run, error) {
	var (
		r               runner.Run
		started, ended  sql.NullInt64
		in, out, total  sql.NullInt64
		errCode, errMsg sql.NullString
		request         sql.NullString
		dur, ttft       sql.NullInt64
		outputRef       sql.NullString
	)
	err := row.Scan(&r.ID, &r.Status, &r.StatusReason, &r.SessionID, &r.ThreadID,
		&r.Actor.ID, &r.Actor.Type, &r.Actor.Name, &r.TenantID, &r.Endpoint, &r.Model,
		&r.RequestID, &r.CorrelationID, &r.CreatedAt, &started, &ended,
		&in, &out, &total, &errCode, &errMsg, &request, &r.Output, &r.Attempts, &dur, &ttft, &r.HostID, &r.TraceID,
		&r.LeaseToken, &outputRef)
	if err != nil {
		return runner.Run{}, err
	}
	if outputRef.Valid {
		if r.Output, err = itemref.OutputText(outputRef.String); err != nil {
			return runner.Run{}, err
		}
	}
	r.Object = "run"
	r.StartedAt = int64Ptr(started)
	r.EndedAt = int64Ptr(ended)
	r.DurationMs = int64Ptr(dur)
	r.TimeToFirstTokenMs = int64Ptr(ttft)
	if in.Valid || out.Valid || total.Valid {
		r.Usage = &runner.Usage{InputTokens: int(in.Int64), OutputTokens: int(out.Int64), TotalTokens: int(total.Int64)}
	}
	if errCode.Valid {
		r.Error = &runner.ErrorInfo{Code: errCode.String, Message: errMsg.String}
	}
	if request.Valid && request.String != "" {
		r.Request = []byte(request.String)
	}
	return r, nil
}

func int64Ptr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

// nullableInt, nullableString and nullableCount turn unset values into SQL NULLs, so COALESCE in
// Transition keeps the stored value when a field is not being set.
// Integers go to the driver as int64, the one integer type it takes: an
// int would be boxed once here and again when converted (rawexec.go).
func nullableInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullableCount(n int) any {
	if n <= 0 {
		return nil
	}
	return int64(n)
}

func nullableString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func usageArgs(u *runner.Usage) (in, out, total any) {
	if u == nil {
		return nil, nil, nil
	}
	return int64(u.InputTokens), int64(u.OutputTokens), int64(u.TotalTokens)
}

// statusArg is a status as the driver takes it, a string. A runner.Status
// is a type of its own, which database/sql's converter reads by
// reflection into a new string. The statuses a run is created in (the
// only ones runArgs passes, once per run) are constants here, boxed
// without an allocation; any other is boxed when the transitions are
// prepared, once per Store.
func statusArg(s runner.Status) any {
	switch s {
	case runner.StatusQueued:
		return string(runner.StatusQueued)
	case runner.StatusRunning:
		return string(runner.StatusRunning)
	}
	return string(s)
}

func errorArgs(e *runner.ErrorInfo) (code, msg any) {
	if e == nil {
		return nil, nil
	}
	return e.Code, e.Message
}
