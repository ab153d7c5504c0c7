package translate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/filtertest"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// A streamed chat completion: a role chunk, a chunk per delta in order, the
// finish chunk, the usage chunk (asked for), [DONE]; one id throughout, the
// run's; the run recorded completed.
func TestChatStreamSequence(t *testing.T) {
	t.Parallel()
	agent := &filtertest.Agent{Events: filtertest.Deltas("Hel", "lo", " world"),
		Result: runner.Result{Text: "Hello world", FinishReason: "stop",
			Usage: runner.Usage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5}}}
	e := newEnv(t, agent, envConfig{})
	for _, usage := range []bool{false, true} {
		_, rec, err := e.do(t, t.Context(), request{ep: filters.ChatCompletions, stream: true, includeUsage: usage})
		if err != nil {
			t.Fatal(err)
		}
		id := runID(t, rec)
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			t.Fatalf("Content-Type %q", ct)
		}
		evs := filtertest.SSE(t, rec.Body.String())
		want := 1 + 3 + 1 + 1 // role, deltas, finish, [DONE]
		if usage {
			want++
		}
		if len(evs) != want {
			t.Fatalf("usage %v: %d frames, want %d:\n%s", usage, len(evs), want, rec.Body)
		}
		if evs[len(evs)-1].Data != "[DONE]" {
			t.Fatalf("last frame %q, want [DONE]", evs[len(evs)-1].Data)
		}
		chunks := evs[:len(evs)-1]
		for i, ev := range chunks {
			c := gjson.Parse(ev.Data)
			if ev.Name != "" || c.Get("object").Str != "chat.completion.chunk" || c.Get("id").Str != "chatcmpl-"+strings.TrimPrefix(id, "run_") {
				t.Fatalf("chunk %d: %s", i, ev.Data)
			}
			role, finish := c.Get("choices.0.delta.role"), c.Get("choices.0.finish_reason")
			if (i == 0) != role.Exists() {
				t.Errorf("chunk %d: delta.role %s (only the first has one)", i, role.Raw)
			}
			if last := i == 4; last != (finish.Type == gjson.String) {
				t.Errorf("chunk %d: finish_reason %s (only the last choice chunk has one)", i, finish.Raw)
			}
		}
		if r := gjson.Get(chunks[0].Data, "choices.0.delta.role").Str; r != "assistant" {
			t.Errorf("role %q", r)
		}
		var text []string
		for _, ev := range chunks[1:4] {
			text = append(text, gjson.Get(ev.Data, "choices.0.delta.content").Str)
		}
		if !slices.Equal(text, []string{"Hel", "lo", " world"}) {
			t.Errorf("deltas %q", text)
		}
		if f := gjson.Get(chunks[4].Data, "choices.0.finish_reason").Str; f != "stop" {
			t.Errorf("finish_reason %q", f)
		}
		if usage {
			u := gjson.Parse(chunks[5].Data)
			if !u.Get("choices").IsArray() || len(u.Get("choices").Array()) != 0 || u.Get("usage.total_tokens").Int() != 5 {
				t.Errorf("usage chunk %s", chunks[5].Data)
			}
		}
		e.wantEnded(t, id, runner.StatusCompleted, "")
		// A direct stream makes no plugin call per token; chat streams no
		// Response object either.
		if n := len(e.plugin.Calls(runtime.MapResult)); n != 0 {
			t.Errorf("%d map_result calls for a chat stream, want 0", n)
		}
	}
}

// A streamed response: typed events in the order of the Responses API, each
// with a sequence_number counting from 0, both Response objects from the
// plugin.
func TestResponsesStreamSequence(t *testing.T) {
	t.Parallel()
	agent := &filtertest.Agent{Events: filtertest.Deltas("Hel", "lo"),
		Result: runner.Result{Text: "Hello", FinishReason: "stop"}}
	e := newEnv(t, agent, envConfig{})
	_, rec, err := e.do(t, t.Context(), request{ep: filters.Responses, stream: true})
	if err != nil {
		t.Fatal(err)
	}
	id := runID(t, rec)
	evs := filtertest.SSE(t, rec.Body.String())
	want := []string{"response.created", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.completed"}
	checkResponseEvents(t, evs, want)
	if d := []string{gjson.Get(evs[3].Data, "delta").Str, gjson.Get(evs[4].Data, "delta").Str}; !slices.Equal(d, []string{"Hel", "lo"}) {
		t.Errorf("deltas %q", d)
	}
	if s := gjson.Get(evs[5].Data, "text").Str; s != "Hello" {
		t.Errorf("output_text.done text %q", s)
	}
	resp := "resp_" + strings.TrimPrefix(id, "run_")
	for _, c := range []struct {
		ev     filtertest.Event
		status string
	}{{evs[0], "in_progress"}, {evs[8], "completed"}} {
		r := gjson.Get(c.ev.Data, "response")
		if r.Get("id").Str != resp || r.Get("status").Str != c.status {
			t.Errorf("%s: response %s, want id %s status %s", c.ev.Name, r.Raw, resp, c.status)
		}
	}
	e.wantEnded(t, id, runner.StatusCompleted, "")
	if n := len(e.plugin.Calls(runtime.MapResult)); n != 2 {
		t.Errorf("%d map_result calls, want 2 (response.created, response.completed)", n)
	}
}

// A call's first fragment closes the message before it; its arguments
// stream as deltas; the done events repeat them whole.
func TestResponsesStreamToolCall(t *testing.T) {
	t.Parallel()
	call := []runner.ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"q":1}`}}
	agent := &filtertest.Agent{Events: []runner.Event{{Delta: "Let me look."},
		{ToolCall: &runner.ToolCallDelta{Index: 0, ID: "call_1", Name: "lookup", Arguments: `{"q":`}},
		{ToolCall: &runner.ToolCallDelta{Index: 0, Arguments: `1}`}}},
		Result: runner.Result{Text: "Let me look.", FinishReason: "tool_calls", ToolCalls: call}}
	e := newEnv(t, agent, envConfig{})
	_, rec, err := e.do(t, t.Context(), request{ep: filters.Responses, stream: true})
	if err != nil {
		t.Fatal(err)
	}
	evs := filtertest.SSE(t, rec.Body.String())
	checkResponseEvents(t, evs, []string{"response.created",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.output_item.done",
		"response.completed"})
	if a := gjson.Get(evs[10].Data, "arguments").Str; a != `{"q":1}` {
		t.Errorf("arguments.done %q", a)
	}
	if it := gjson.Get(evs[7].Data, "item"); it.Get("type").Str != "function_call" || it.Get("call_id").Str != "call_1" ||
		gjson.Get(evs[7].Data, "output_index").Int() != 1 {
		t.Errorf("function_call item added: %s", evs[7].Data)
	}
	e.wantEnded(t, runID(t, rec), runner.StatusCompleted, runner.ReasonToolCalls)
}

// checkResponseEvents checks the event names, that each data's type is its
// event's name, and that sequence_number counts from 0 without a gap.
func checkResponseEvents(t *testing.T, evs []filtertest.Event, want []string) {
	t.Helper()
	if got := names(evs); !slices.Equal(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	for i, ev := range evs {
		d := gjson.Parse(ev.Data)
		if d.Get("type").Str != ev.Name {
			t.Errorf("event %d %s: data type %q", i, ev.Name, d.Get("type").Str)
		}
		if n := d.Get("sequence_number"); n.Type != gjson.Number || n.Int() != int64(i) {
			t.Errorf("event %d %s: sequence_number %s, want %d", i, ev.Name, n.Raw, i)
		}
	}
}
