package openai_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"github.com/runedge/runedge/runner"
)

var weatherTool = runner.Tool{Name: "get_weather", Description: "Weather in a city",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`), Strict: true}

// toolTurn is a conversation that has called a tool and carries its result.
func toolTurn(stream bool) runner.ProviderRequest {
	f := false
	return runner.ProviderRequest{Stream: stream, Attempt: 1, Tools: []runner.Tool{weatherTool},
		ToolChoice: runner.ToolChoice{Mode: runner.ToolChoiceFunction, Name: "get_weather"}, ParallelToolCalls: &f,
		Messages: []runner.Message{
			{Role: "user", Content: "weather in Paris?"},
			{Role: "assistant", ToolCalls: []runner.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
			{Role: "tool", ToolCallID: "call_1", Content: "sunny"},
		}}
}

func TestToolsReachTheUpstream(t *testing.T) {
	u := newUpstream(t, answers("It is sunny."))
	if _, _, err := generate(t, u.provider(nil), toolTurn(false)); err != nil {
		t.Fatal(err)
	}
	b := u.body(0)
	want := map[string]any{
		"messages": []any{
			map[string]any{"role": "user", "content": "weather in Paris?"},
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
				"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}},
			map[string]any{"role": "tool", "content": "sunny", "tool_call_id": "call_1"},
		},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather",
			"description": "Weather in a city", "strict": true, "parameters": map[string]any{"type": "object",
				"properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}}}},
		"tool_choice":         map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}},
		"parallel_tool_calls": false,
	}
	for k, v := range want {
		if !reflect.DeepEqual(b[k], v) {
			t.Errorf("upstream %s = %#v, want %#v", k, b[k], v)
		}
	}
}

func TestNoToolFieldsWithoutTools(t *testing.T) {
	u := newUpstream(t, answers("ok"))
	req := ask("hi", false)
	req.ToolChoice = runner.ToolChoice{Mode: runner.ToolChoiceNone}
	if _, _, err := generate(t, u.provider(nil), req); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"tools", "tool_choice", "parallel_tool_calls"} {
		if _, ok := u.body(0)[k]; ok {
			t.Errorf("%s sent without tools", k)
		}
	}
}

func TestWholeToolCalls(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,`+
			`"tool_calls":[{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}},`+
			`{"id":"call_b","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]},"finish_reason":"tool_calls"}],`+
			`"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}`)
	})
	var got []runner.ToolCallDelta
	res, err := u.provider(nil).Generate(t.Context(), runner.ProviderRequest{Messages: ask("x", false).Messages, Tools: []runner.Tool{weatherTool}},
		func(ev runner.Event) error {
			if ev.ToolCall != nil {
				got = append(got, *ev.ToolCall)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []runner.ToolCall{{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Oslo"}`},
		{ID: "call_b", Name: "get_weather", Arguments: `{"city":"Rome"}`}}
	if res.FinishReason != "tool_calls" || !reflect.DeepEqual(res.ToolCalls, wantCalls) || res.Text != "" {
		t.Fatalf("result %+v", res)
	}
	if len(got) != 2 || got[1].Index != 1 || got[1].ID != "call_b" || got[1].Arguments != `{"city":"Rome"}` {
		t.Fatalf("fragments %+v", got)
	}
}

// TestStreamedToolCalls passes fragments on as they arrive: the upstream
// holds the rest of the arguments until the first fragment came through.
func TestStreamedToolCalls(t *testing.T) {
	firstSeen := make(chan struct{})
	tc := func(frag string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[` + frag + `]},"finish_reason":null}]}` + "\n\n"
	}
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, roleChunk, tc(`{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}`),
			tc(`{"index":0,"function":{"arguments":"{\"ci"}}`))
		select {
		case <-firstSeen:
		case <-r.Context().Done():
			return
		}
		send(w, tc(`{"index":0,"function":{"arguments":"ty\":\"Oslo\"}"}}`),
			tc(`{"index":1,"id":"call_b","type":"function","function":{"name":"get_weather","arguments":"{}"}}`),
			`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\n",
			doneEvent)
	})
	var got []runner.ToolCallDelta
	res, err := u.provider(nil).Generate(t.Context(), runner.ProviderRequest{Messages: ask("x", true).Messages, Stream: true,
		Tools: []runner.Tool{weatherTool}}, func(ev runner.Event) error {
		if ev.ToolCall != nil {
			if len(got) == 1 {
				close(firstSeen)
			}
			got = append(got, *ev.ToolCall)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []runner.ToolCallDelta{{Index: 0, ID: "call_a", Name: "get_weather"}, {Index: 0, Arguments: `{"ci`},
		{Index: 0, Arguments: `ty":"Oslo"}`}, {Index: 1, ID: "call_b", Name: "get_weather", Arguments: "{}"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fragments %+v, want %+v", got, want)
	}
	wantCalls := []runner.ToolCall{{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Oslo"}`}, {ID: "call_b", Name: "get_weather", Arguments: "{}"}}
	if res.FinishReason != "tool_calls" || !reflect.DeepEqual(res.ToolCalls, wantCalls) {
		t.Fatalf("result %+v", res)
	}
}

// An upstream that sends calls without ids (some local servers) still gets
// the client ids to pair its results with, on the first fragment.
func TestCallsWithoutIDsGetOne(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"get_weather","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`+"\n\n", doneEvent)
	})
	var got []runner.ToolCallDelta
	res, err := u.provider(nil).Generate(t.Context(), runner.ProviderRequest{Messages: ask("x", true).Messages, Stream: true,
		Tools: []runner.Tool{weatherTool}}, func(ev runner.Event) error {
		got = append(got, *ev.ToolCall)
		return nil
	})
	if err != nil || len(res.ToolCalls) != 1 || len(got) != 1 {
		t.Fatalf("result %+v fragments %+v, %v", res, got, err)
	}
	if id := res.ToolCalls[0].ID; len(id) < 20 || id[:5] != "call_" || got[0].ID != id || got[0].Name != "get_weather" {
		t.Fatalf("call %+v, first fragment %+v", res.ToolCalls[0], got[0])
	}
}
