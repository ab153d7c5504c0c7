package agent

import (
	"fmt"
	"slices"

	"github.com/runedge/runedge/runner"
)

// emitCalls streams buffered tool calls whole: one fragment per call with
// its id, name and all of its arguments.
func emitCalls(calls []runner.ToolCall, emit func(runner.Event) error) error {
	for i, c := range calls {
		d := runner.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		if err := emit(runner.Event{ToolCall: &d}); err != nil {
			return err
		}
	}
	return nil
}

// offer is what a request offered the model: its tools and tool_choice.
type offer struct {
	tools  []runner.Tool
	choice runner.ToolChoice
}

// checkCalls refuses an answer whose calls break the client's rules: a call
// of a tool that was not offered, calls when tool_choice is none, or a call
// of another function than the one tool_choice names. A model that does
// that has failed the request; passing the call on would make the client
// run something it never offered. (An answer without calls despite
// tool_choice required is passed on: some compatible upstreams do not
// enforce it, and text is something every client can handle.)
//
// It takes the offer, not the request, so that the agent holds no reference
// to the request's messages while it waits on the provider.
func checkCalls(o offer, res runner.Result) error {
	if len(res.ToolCalls) == 0 {
		return nil
	}
	if o.choice.Mode == runner.ToolChoiceNone {
		return fmt.Errorf("%w: the model called a tool although tool_choice is none", runner.ErrProvider)
	}
	for _, c := range res.ToolCalls {
		offered := slices.ContainsFunc(o.tools, func(t runner.Tool) bool { return t.Name == c.Name })
		if !offered {
			return fmt.Errorf("%w: the model called %q, which was not offered", runner.ErrProvider, c.Name)
		}
		if o.choice.Mode == runner.ToolChoiceFunction && c.Name != o.choice.Name {
			return fmt.Errorf("%w: the model called %q, but tool_choice names %q", runner.ErrProvider, c.Name, o.choice.Name)
		}
	}
	return nil
}

// boundCalls wraps emit so that fragments of tool calls beyond the first
// max are not streamed: max_tool_calls lets the model make at most max
// calls, and further calls are dropped, as the OpenAI API ignores them
// (Run trims the result to match).
func boundCalls(max int, emit func(runner.Event) error) func(runner.Event) error {
	return func(e runner.Event) error {
		if e.ToolCall != nil && e.ToolCall.Index >= max {
			return nil
		}
		return emit(e)
	}
}
