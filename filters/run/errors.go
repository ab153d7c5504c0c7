package run

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/runner"
)

// StartError maps an error of the runner's request preparation
// (runner.Service.Start, or Input for POST /v1/responses/input_tokens) as
// the run stage does.
func StartError(ep filters.Endpoint, err error) error { return startError(ep, err) }

// startError maps a refusal to start a run. None of these created a run.
func startError(ep filters.Endpoint, err error) error {
	var inf *runner.ItemNotFoundError
	var te *runner.ToolSchemaError
	var ur *runner.UnansweredResultError
	switch {
	case errors.Is(err, runner.ErrTenantBusy):
		// The tenant's own share, not the server's: 429, like its rate limit.
		return &apierr.Error{Status: http.StatusTooManyRequests, Type: apierr.TypeRateLimit,
			Code: apierr.CodeRateLimited, RetryAfter: 1, Err: err,
			Message: "this tenant has as many runs in flight as it may (limits.max_in_flight_per_tenant); retry when one ends"}
	case errors.As(err, &inf):
		e := apierr.New(http.StatusBadRequest, apierr.TypeInvalidRequest, apierr.CodeItemNotFound,
			fmt.Sprintf("input[%d] references item %q, which does not exist", inf.Index, inf.ID))
		e.Param, e.Err = fmt.Sprintf("input[%d]", inf.Index), err
		return e
	case errors.Is(err, runner.ErrPreviousResponseNotFound):
		e := apierr.New(http.StatusBadRequest, apierr.TypeInvalidRequest, apierr.CodePreviousNotFound,
			"previous response not found: it does not exist, was deleted, or was not stored")
		e.Param, e.Err = "previous_response_id", err
		return e
	case errors.Is(err, runner.ErrNoHistory):
		e := apierr.New(http.StatusBadRequest, apierr.TypeInvalidRequest, apierr.CodeUnsupportedParameter,
			"this service's run store keeps no response history, so previous_response_id, item_reference and background are not supported")
		e.Err = err
		return e
	case errors.Is(err, runner.ErrUnavailable):
		return apierr.Unavailable("runedge is shutting down or at its limit of runs in flight; retry shortly", 1, err)
	case errors.Is(err, runner.ErrNotFound):
		e := apierr.NotFound("the session or thread named in the request headers does not exist")
		e.Err = err
		return e
	case errors.As(err, &ur):
		// The result's place in the client's input is not known here
		// (earlier turns and references were spliced in), so the param
		// is the list, and the message names the call.
		param := "input"
		if ep == filters.ChatCompletions {
			param = "messages"
		}
		id := ur.CallID
		if len(id) > 64 {
			id = id[:64] + "..."
		}
		e := apierr.InvalidBody(param, "a tool result answers call %q, which no earlier tool call made (in this request, or in the responses previous_response_id continues)", id)
		e.Err = err
		return e
	case errors.As(err, &te):
		param := fmt.Sprintf("tools[%d].parameters", te.Index)
		if ep == filters.ChatCompletions {
			param = fmt.Sprintf("tools[%d].function.parameters", te.Index)
		}
		e := apierr.InvalidBody(param, "%s is not a valid JSON Schema: %v", param, te.Err)
		if errors.Is(err, runner.ErrInvalidSchema) {
			e.Code = apierr.CodeInvalidSchema
		}
		e.Err = err
		return e
	case errors.Is(err, runner.ErrInvalidRequest):
		e := apierr.InvalidBody(filters.SchemaParam(ep), "%s", err.Error())
		if errors.Is(err, runner.ErrInvalidSchema) {
			e.Code = apierr.CodeInvalidSchema
		}
		e.Err = err
		return e
	}
	return err
}

// outcomeError is the one mapping from how a run ended (what
// runner.Handle.Finish returned) to the error the client sees; the
// finisher in run.go is its only caller. Only messages written for clients
// pass through (an *apierr.Error's, a provider's, the agent's account of
// invalid output); anything unexpected gets genericRunFailed, and the edge
// appends the run id to every 5xx message.
func outcomeError(err error) error {
	if errors.Is(err, runner.ErrNotRecorded) {
		// The store failed to record the end: whatever the run's own
		// outcome, the client's error is ours, and the store's text (a
		// driver's, naming files or hosts) stays in the log, where
		// Handle.Finish wrote it under the run id.
		return &apierr.Error{Status: http.StatusInternalServerError, Type: apierr.TypeServer,
			Code: apierr.CodeRunFailed, Message: genericRunFailed, Err: err}
	}
	var api *apierr.Error
	if errors.As(err, &api) {
		return api
	}
	// Provider errors carry messages written for clients (the openai
	// provider names what the upstream did, never its address or TLS
	// detail); the edge adds the run id to 5xx messages and logs Err.
	e := &apierr.Error{Err: err, Message: err.Error()}
	switch {
	case errors.Is(err, runner.ErrRateLimited):
		// The upstream's wait is passed on: SDKs honour Retry-After, and a
		// guess of ours would either waste the client's time or earn
		// another 429. Without one, the shortest honest wait.
		e.Status, e.Type, e.Code = http.StatusTooManyRequests, apierr.TypeRateLimit, apierr.CodeRateLimited
		e.RetryAfter = 1
		var ra interface{ RetryAfter() int }
		if errors.As(err, &ra) && ra.RetryAfter() > 0 {
			e.RetryAfter = ra.RetryAfter()
		}
	case errors.Is(err, runner.ErrProvider):
		e.Status, e.Type, e.Code = http.StatusBadGateway, apierr.TypeAPI, apierr.CodeProviderError
	case errors.Is(err, runner.ErrTimeout):
		e.Status, e.Type, e.Code = http.StatusGatewayTimeout, apierr.TypeAPI, apierr.CodeTimeout
	case errors.Is(err, runner.ErrShutdown):
		e.Status, e.Type, e.Code = http.StatusServiceUnavailable, apierr.TypeAPI, apierr.CodeUnavailable
		e.RetryAfter = 1
		e.Message = "runedge is shutting down; the run was cancelled"
	case errors.Is(err, runner.ErrCancelled):
		e.Status, e.Type, e.Code = http.StatusConflict, apierr.TypeAPI, apierr.CodeRunCancelled
	case errors.Is(err, runner.ErrWaiting):
		e.Status, e.Type, e.Code = http.StatusConflict, apierr.TypeAPI, apierr.CodeRunWaiting
		e.Message = "the run is waiting for approval or external input; resume it with the native API using the run headers"
	case errors.Is(err, runner.ErrOutputInvalid):
		// The agent's own account of the mismatch, meant for the client.
		e.Status, e.Type, e.Code = http.StatusInternalServerError, apierr.TypeServer, apierr.CodeRunFailed
	default:
		// Anything else is unexpected — a store driver's error, say — and
		// its text is for operators (logged with the run), not for the
		// client: it may name files, tables or hosts.
		e.Status, e.Type, e.Code = http.StatusInternalServerError, apierr.TypeServer, apierr.CodeRunFailed
		e.Message = genericRunFailed
	}
	return e
}

// genericRunFailed is the message of an unexpected run failure.
const genericRunFailed = "the run failed on the server; the run headers identify it for the operator"
