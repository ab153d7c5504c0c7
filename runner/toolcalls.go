package runner

import "encoding/json"

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
