package apierr

import (
	"errors"
	"time"

	"github.com/runedge/runedge/runner"
)

// GenericRunFailed is the message of an unexpected run failure: what went
// wrong (a driver's error naming files or hosts) is for the log.
const GenericRunFailed = "the run failed on the server; the run headers identify it for the operator"

// outcome is one row of the map from the runner's outcomes (its sentinel
// errors) to HTTP: a code, whose status and type the catalog gives.
type outcome struct {
	err        error
	code       string
	retryAfter int
	// message is what the client reads; "" passes the error's own text,
	// which the runner writes for clients (a provider's account, the
	// agent's account of invalid output).
	message string
}

// outcomes is the one map from how the runner ended or refused a run, or
// how its store failed, to what the client gets; every handler reaches it
// through From. The first row that matches wins: a run whose end was not
// recorded is a failed run whatever its own outcome.
var outcomes = []outcome{
	{runner.ErrNotRecorded, CodeRunFailed, 0, GenericRunFailed},
	// The store cannot be reached, or the service is draining or full:
	// retry. Never a 4xx, whatever the request was doing.
	{runner.ErrUnavailable, CodeUnavailable, 1,
		"runedge cannot serve this now (shutting down, at its limit of runs in flight, or its run store unreachable); retry shortly"},
	// The tenant's own share, not the server's: 429, like its rate limit.
	{runner.ErrTenantBusy, CodeRateLimited, 1,
		"this tenant has as many runs in flight as it may (limits.max_in_flight_per_tenant); retry when one ends"},
	// The token's own share, whatever tenants it names: 429 too.
	{runner.ErrTokenBusy, CodeRateLimited, 1,
		"this token has as many runs in flight as it may (limits.max_in_flight_per_token); retry when one ends"},
	{runner.ErrBackgroundBusy, CodeUnavailable, 1,
		"runedge is at its limit of background runs in flight (limits.max_background); retry shortly"},
	{runner.ErrRateLimited, CodeRateLimited, 1, ""},
	// A budget's refusal, before the run: its message names the budget
	// and when it resets (quotaError adds the headers).
	{runner.ErrInsufficientQuota, CodeInsufficientQuota, 0, ""},
	{runner.ErrProvider, CodeProviderError, 0, ""},
	{runner.ErrTimeout, CodeTimeout, 0, ""},
	{runner.ErrShutdown, CodeUnavailable, 1, "runedge is shutting down; the run was cancelled"},
	{runner.ErrCancelled, CodeRunCancelled, 0, ""},
	{runner.ErrWaiting, CodeRunWaiting, 0,
		"the run is waiting for approval or external input; resume it with the native API using the run headers"},
	{runner.ErrOutputInvalid, CodeRunFailed, 0, ""},
}

// FromRunner returns the client's error for one of the runner's outcomes,
// nil when err is none of them. A rate limit passes the upstream's wait
// on: SDKs honour Retry-After, and a guess of ours would either waste the
// client's time or earn another 429.
func FromRunner(err error) *Error {
	for _, o := range outcomes {
		if !errors.Is(err, o.err) {
			continue
		}
		e := New(o.code, o.message)
		e.RetryAfter, e.Err = o.retryAfter, err
		if e.Message == "" {
			e.Message = err.Error()
		}
		var ra interface{ RetryAfter() int }
		if o.err == runner.ErrRateLimited && errors.As(err, &ra) && ra.RetryAfter() > 0 {
			e.RetryAfter = ra.RetryAfter()
		}
		var qe *runner.QuotaError
		if o.err == runner.ErrInsufficientQuota && errors.As(err, &qe) {
			e.Message = qe.Error()
			wait := time.Until(qe.Reset)
			e.RetryAfter = int(max(1, (wait+time.Second-1)/time.Second))
			if qe.Unit == "tokens" {
				e.Tokens = RateLimitTokens{Limit: qe.Limit, Remaining: qe.Remaining, Reset: wait}
			}
		}
		return e
	}
	return nil
}
