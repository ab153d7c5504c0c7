package translate

import (
	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/runner"
)

// appendToolCalls appends the result's ,"tool_calls":[{"id","name","arguments"}…]
// for map_result (the native form, runner/native).
func appendToolCalls(dst []byte, calls []runner.ToolCall) []byte {
	dst = append(dst, `,"tool_calls":[`...)
	for i, c := range calls {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = compat.AppendJSONString(dst, c.ID)
		dst = append(dst, `,"name":`...)
		dst = compat.AppendJSONString(dst, c.Name)
		dst = append(dst, `,"arguments":`...)
		dst = compat.AppendJSONString(dst, c.Arguments)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// wholeCalls are a result's calls as fragments, for a stream whose agent
// produced them without streaming any (one fragment per call).
func wholeCalls(calls []runner.ToolCall) []runner.ToolCallDelta {
	out := make([]runner.ToolCallDelta, len(calls))
	for i, c := range calls {
		out[i] = runner.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	return out
}
