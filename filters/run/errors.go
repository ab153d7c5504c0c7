package run

import (
	"errors"
	"fmt"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/runner"
)

// StartError maps an error of the runner's request preparation
// (runner.Service.Start, or Input for POST /v1/responses/input_tokens) as
// the run stage does.
func StartError(ep filters.Endpoint, err error) error { return startError(ep, err) }

// startError maps a refusal to start a run that only this stage can word
// (the param names the request's field). None of these created a run. The
// rest — the service draining or full, the tenant at its share, the store
// unreachable — go through the one map of runner outcomes (apierr.From).
func startError(ep filters.Endpoint, err error) error {
	var inf *runner.ItemNotFoundError
	var te *runner.ToolSchemaError
	var ur *runner.UnansweredResultError
	var be *runner.BoundError
	switch {
	case errors.As(err, &be):
		e := apierr.InvalidBody(be.Param, "%s", be.Msg)
		e.Err = err
		return e
	case errors.As(err, &inf):
		e := apierr.New(apierr.CodeItemNotFound, fmt.Sprintf("input[%d] references item %q, which does not exist", inf.Index, inf.ID))
		e.Param, e.Err = fmt.Sprintf("input[%d]", inf.Index), err
		return e
	case errors.Is(err, runner.ErrPreviousResponseNotFound):
		e := apierr.New(apierr.CodePreviousNotFound, "previous response not found: it does not exist, was deleted, or was not stored")
		e.Param, e.Err = "previous_response_id", err
		return e
	case errors.Is(err, runner.ErrNoHistory):
		e := apierr.New(apierr.CodeUnsupportedParameter, "this service's run store keeps no response history, so previous_response_id, item_reference and background are not supported")
		e.Err = err
		return e
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
		e := apierr.Param(schemaCode(err), param, fmt.Sprintf("%s is not a valid JSON Schema: %v", param, te.Err))
		e.Err = err
		return e
	case errors.Is(err, runner.ErrInvalidRequest):
		e := apierr.Param(schemaCode(err), filters.SchemaParam(ep), err.Error())
		e.Err = err
		return e
	}
	return err
}

// outcomeError is the error the client sees for how a run ended (what
// runner.Handle.Finish returned); end in run.go is its only
// caller. Only messages written for clients pass through (an
// *apierr.Error's, or as the runner outcome map says); anything
// unexpected — a store driver's error, say, which may name files, tables
// or hosts — gets the generic run_failed, and the edge appends the run id
// to every 5xx message.
func outcomeError(err error) error {
	var api *apierr.Error
	if !errors.Is(err, runner.ErrNotRecorded) && errors.As(err, &api) {
		return api
	}
	if e := apierr.FromRunner(err); e != nil {
		return e
	}
	e := apierr.New(apierr.CodeRunFailed, apierr.GenericRunFailed)
	e.Err = err
	return e
}

// schemaCode is invalid_schema for a schema no value satisfies or beyond
// the limits, invalid_body for any other bad request.
func schemaCode(err error) string {
	if errors.Is(err, runner.ErrInvalidSchema) {
		return apierr.CodeInvalidSchema
	}
	return apierr.CodeInvalidBody
}
