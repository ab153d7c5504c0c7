package translate

import (
	"github.com/runedge/runedge/runner"
)

// wholeCalls are a result's calls as fragments, for a stream whose agent
// produced them without streaming any (one fragment per call).
func wholeCalls(calls []runner.ToolCall) []runner.ToolCallDelta {
	out := make([]runner.ToolCallDelta, len(calls))
	for i, c := range calls {
		out[i] = runner.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	return out
}
