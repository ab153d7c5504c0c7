package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/runedge/runedge/runner/schema"
)

// A run that ends in tool calls records the calls as its output: the store's
// output column holds the JSON array of ToolCall (the run's status_reason,
// tool_calls, says so), and the run object shows them as tool_calls. The
// column is the one the text goes in, so the store needs no new column for
// what is, either way, the run's answer.

// encodeCalls is the stored output of a run that ended in calls.
func encodeCalls(calls []ToolCall) string {
	b, err := json.Marshal(calls)
	if err != nil { // strings only: cannot fail
		return ""
	}
	return string(b)
}

// withCalls fills r.ToolCalls from the stored output of a run that ended
// in tool calls.
func withCalls(r Run) Run {
	if r.Status != StatusCompleted || r.StatusReason != ReasonToolCalls || r.Output == "" {
		return r
	}
	var calls []ToolCall
	if json.Unmarshal([]byte(r.Output), &calls) == nil {
		r.ToolCalls = calls
	}
	return r
}

// ToolSchemaError is a tool whose parameters are not a JSON Schema that
// compiles, or one beyond schema.Check's bounds. It wraps ErrInvalidRequest
// (ErrInvalidSchema for the bounds); Index says which tool, so the edge can
// name the client's field (whose path differs by endpoint).
type ToolSchemaError struct {
	Index  int
	Err    error
	Bounds bool
}

func (e *ToolSchemaError) Error() string {
	return fmt.Sprintf("%v: tools[%d].parameters: %v", ErrInvalidRequest, e.Index, e.Err)
}

func (e *ToolSchemaError) Unwrap() error {
	if e.Bounds {
		return ErrInvalidSchema
	}
	return ErrInvalidRequest
}

// checkTools checks every tool's parameters schema like the output
// schema (schema.Check: compiles, within bounds, satisfiable), so a broken
// one is a 400 before the run exists rather than a provider failure after.
func checkTools(ctx context.Context, tools []Tool) error {
	for i, t := range tools {
		if len(t.Parameters) == 0 {
			continue
		}
		if _, err := schema.CheckContext(ctx, t.Parameters); err != nil {
			if ctx.Err() != nil { // the request ended: no refusal to give
				return context.Cause(ctx)
			}
			return &ToolSchemaError{Index: i, Err: err, Bounds: errors.Is(err, schema.ErrBounds)}
		}
	}
	return nil
}

// UnansweredResultError is a tool result (a chat "tool" message, a
// Responses function_call_output) whose call id no earlier tool call of
// the agent's input made: not in the request, nor in the earlier turns
// previous_response_id replays, nor in a referenced item. OpenAI refuses
// such input with a 400; passed on, the upstream model would refuse it
// and the client's mistake would come back as a 502. It wraps
// ErrInvalidRequest.
type UnansweredResultError struct{ CallID string }

func (e *UnansweredResultError) Error() string {
	return fmt.Sprintf("%v: a tool result answers call %q, which no earlier tool call in the input made", ErrInvalidRequest, e.CallID)
}

func (e *UnansweredResultError) Unwrap() error { return ErrInvalidRequest }

// checkToolResults checks that every tool result in the agent's input
// (history included) answers a call made before it.
func checkToolResults(in []Message) error {
	var called map[string]bool
	for _, m := range in {
		for _, c := range m.ToolCalls {
			if called == nil {
				called = make(map[string]bool)
			}
			called[c.ID] = true
		}
		if m.Role == "tool" && !called[m.ToolCallID] {
			return &UnansweredResultError{CallID: m.ToolCallID}
		}
	}
	return nil
}
