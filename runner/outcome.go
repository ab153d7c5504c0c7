package runner

import (
	"context"
	"errors"
	"fmt"
)

// cancelCause is the cause a run's context is cancelled with by this
// service (native cancel, shutdown). Anything else that cancels it came
// from the parent: the client went away.
type cancelCause struct{ reason string }

func (c cancelCause) Error() string { return "run cancelled: " + c.reason }

// outcome is how a run ended: the state to record and the error for the
// caller.
type outcome struct {
	status Status
	reason string
	info   *ErrorInfo
	res    *Result
	err    error
}

// classify decides the outcome. A finished agent (err nil) completed, even
// if the context was cancelled a moment later. Otherwise the run's context
// speaks first: if it was cancelled or timed out, that is why the agent
// stopped, whatever error the cancellation surfaced as. Then the error's
// sentinel, then a caller-supplied code (RunErrorCode), then run_failed.
func classify(ctx context.Context, res *Result, err error) outcome {
	if err == nil {
		return outcome{status: StatusCompleted, res: res}
	}
	if ctx.Err() != nil {
		var cc cancelCause
		switch cause := context.Cause(ctx); {
		case errors.As(cause, &cc) && cc.reason == ReasonShutdown:
			return outcome{status: StatusCancelled, reason: cc.reason, err: ErrShutdown}
		case errors.As(cause, &cc):
			return outcome{status: StatusCancelled, reason: cc.reason,
				err: fmt.Errorf("%w: %s", ErrCancelled, cc.reason)}
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			terr := cause
			if !errors.Is(terr, ErrTimeout) {
				terr = fmt.Errorf("%w: %v", ErrTimeout, cause)
			}
			return failed(ReasonTimeout, terr)
		default:
			// A failed write cancels the request's context too; the write's
			// error, or the cause the context was cancelled with (a socket
			// whose client answers no ping), says whether the client left
			// or stalled.
			return clientGone(errors.Join(err, cause))
		}
	}
	var coded interface{ RunErrorCode() string }
	switch {
	case errors.Is(err, ErrClientGone):
		// A write to the client failed before its context was cancelled.
		return clientGone(err)
	case errors.Is(err, ErrWaiting):
		return outcome{status: StatusWaiting, reason: ReasonApproval, err: err}
	case errors.Is(err, ErrRateLimited):
		return failed(ReasonRateLimited, err)
	case errors.Is(err, ErrProvider):
		return failed(ReasonProviderError, err)
	case errors.Is(err, ErrOutputInvalid):
		return failed(ReasonOutputInvalid, err)
	case errors.Is(err, ErrTimeout):
		return failed(ReasonTimeout, err)
	case errors.Is(err, context.DeadlineExceeded):
		return failed(ReasonTimeout, fmt.Errorf("%w: %w", ErrTimeout, err))
	case errors.As(err, &coded) && coded.RunErrorCode() != "":
		return failed(coded.RunErrorCode(), err)
	}
	return failed(ReasonFailed, err)
}

// clientGone is the outcome of a run whose client went away or, when err
// says so, stopped reading.
func clientGone(err error) outcome {
	reason := ReasonClientDisconnect
	if errors.Is(err, ErrClientStalled) {
		reason = ReasonClientStalled
	}
	return outcome{status: StatusCancelled, reason: reason, err: fmt.Errorf("%w: %s", ErrCancelled, reason)}
}

func failed(reason string, err error) outcome {
	return outcome{status: StatusFailed, reason: reason,
		info: &ErrorInfo{Code: reason, Message: err.Error()}, err: err}
}

// transition is the store write for the outcome; attempts is the agent's
// count of provider calls (0: unknown).
func (o outcome) transition(now int64, attempts int) Transition {
	t := Transition{Status: o.status, Reason: o.reason, Error: o.info, Attempts: attempts}
	if o.status.Terminal() {
		t.EndedAt = &now
	}
	if o.status == StatusCompleted {
		var res Result
		if o.res != nil {
			res = *o.res
		}
		u := res.Usage
		if u.TotalTokens == 0 {
			u.TotalTokens = u.InputTokens + u.OutputTokens
		}
		t.Usage, t.Output = &u, res.Text
		if len(res.ToolCalls) > 0 {
			t.Reason, t.Output = ReasonToolCalls, encodeCalls(res.ToolCalls)
		}
	}
	return t
}
