package postgres

import (
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/itemref"
)

// runColumns is the column list every run query selects, in scanRun's order.
const runColumns = `id, status, status_reason, session_id, thread_id,
	actor_id, actor_type, actor_name, tenant_id, endpoint, model,
	request_id, correlation_id, created_at, started_at, ended_at,
	input_tokens, output_tokens, total_tokens, error_code, error_message,
	request, output, attempts, duration_ms, ttft_ms, host_id, trace_id,
	lease_token, ` + outputRefColumn

// outputRefColumn is the stored message of the first output item of a run
// whose output text is kept there (output_ref, itemref.OutputElided), NULL
// for the others.
const outputRefColumn = `CASE WHEN output_ref THEN (SELECT i.message FROM response_items i
	WHERE i.run_id = runs.id AND i.output ORDER BY i.position LIMIT 1) END`

type scanner interface{ Scan(dest ...any) error }

func scanRun(row scanner) (runner.Run, error) {
	var (
		r               runner.Run
		status          string
		in, out, total  *int64
		errCode, errMsg *string
		request         *string
		attempts        int64
		outputRef       *string
	)
	err := row.Scan(&r.ID, &status, &r.StatusReason, &r.SessionID, &r.ThreadID,
		&r.Actor.ID, &r.Actor.Type, &r.Actor.Name, &r.TenantID, &r.Endpoint, &r.Model,
		&r.RequestID, &r.CorrelationID, &r.CreatedAt, &r.StartedAt, &r.EndedAt,
		&in, &out, &total, &errCode, &errMsg, &request, &r.Output, &attempts, &r.DurationMs, &r.TimeToFirstTokenMs, &r.HostID, &r.TraceID,
		&r.LeaseToken, &outputRef)
	if err != nil {
		return runner.Run{}, err
	}
	if outputRef != nil {
		if r.Output, err = itemref.OutputText(*outputRef); err != nil {
			return runner.Run{}, err
		}
	}
	r.Object = "run"
	r.Status = runner.Status(status)
	r.Attempts = int(attempts)
	if in != nil || out != nil || total != nil {
		r.Usage = &runner.Usage{InputTokens: deref(in), OutputTokens: deref(out), TotalTokens: deref(total)}
	}
	if errCode != nil {
		r.Error = &runner.ErrorInfo{Code: *errCode}
		if errMsg != nil {
			r.Error.Message = *errMsg
		}
	}
	if request != nil && *request != "" {
		r.Request = []byte(*request)
	}
	return r, nil
}

func deref(p *int64) int {
	if p == nil {
		return 0
	}
	return int(*p)
}

// Arguments for NULL-means-keep columns (COALESCE in Transition).
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

func errorArgs(e *runner.ErrorInfo) (code, msg any) {
	if e == nil {
		return nil, nil
	}
	return e.Code, e.Message
}
