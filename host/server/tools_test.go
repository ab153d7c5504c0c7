package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/runner"
)

// Tool loops with openai-go: the model calls get_weather, the client runs
// it and sends the result, the model answers with text quoting it. On both
// endpoints, streamed and not, with the offline provider and with the
// openai provider in front of a scripted upstream that plays the same model
// over a real socket (so the tools, the calls and the results cross the
// chat completions wire both ways).

var weatherParams = map[string]any{
	"type":                 "object",
	"properties":           map[string]any{"city": map[string]any{"type": "string"}},
	"required":             []string{"city"},
	"additionalProperties": false,
}

func weatherResult(city string) string { return `{"city":"` + city + `","sky":"sunny"}` }

// toolModel is the scripted upstream: a chat completions endpoint that
// calls get_weather({"city": <last word>}) when the conversation ends with
// the user, and answers "get_weather returned: <result>" when it ends with
// a tool result, streamed in fragments or whole as asked. Like the offline
// provider, so one test body serves both.
func toolModel(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	msgs := gjson.GetBytes(b, "messages").Array()
	last := msgs[len(msgs)-1]
	stream := gjson.GetBytes(b, "stream").Bool()
	if gjson.GetBytes(b, "tools.0.function.name").Str != "get_weather" || gjson.GetBytes(b, "tools.0.type").Str != "function" {
		http.Error(w, `{"error":{"message":"no tools"}}`, http.StatusBadRequest)
		return
	}
	if last.Get("role").Str == "tool" {
		prev := msgs[len(msgs)-2]
		if prev.Get("tool_calls.0.id").Str != last.Get("tool_call_id").Str || prev.Get("content").Type != gjson.Null {
			http.Error(w, `{"error":{"message":"tool result without its call"}}`, http.StatusBadRequest)
			return
		}
		text := "get_weather returned: " + last.Get("content").Str
		if stream {
			sseStart(w)
			sseSend(w, contentChunk(text[:10]), contentChunk(text[10:]), stopChunk)
			return
		}
		wholeOf(text)(w, r)
		return
	}
	words := strings.Fields(last.Get("content").Str)
	args, _ := json.Marshal(map[string]string{"city": words[len(words)-1]})
	id := fmt.Sprintf("call_up%d", len(msgs))
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		call, _ := json.Marshal(map[string]any{"id": id, "type": "function", "function": map[string]string{"name": "get_weather", "arguments": string(args)}})
		fmt.Fprintf(w, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[%s]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`, call)
		return
	}
	frag := func(s string) string {
		return `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[` + s + `]},"finish_reason":null}]}` + "\n\n"
	}
	a, _ := json.Marshal(string(args[:5]))
	rest, _ := json.Marshal(string(args[5:]))
	sseStart(w)
	sseSend(w, frag(`{"index":0,"id":"`+id+`","type":"function","function":{"name":"get_weather","arguments":""}}`),
		frag(`{"index":0,"function":{"arguments":`+string(a)+`}}`), frag(`{"index":0,"function":{"arguments":`+string(rest)+`}}`),
		`data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
}

func TestToolLoopOpenAIGo(t *testing.T) {
	up := newScripted(t, toolModel)
	for _, p := range []struct {
		name string
		h    *harness
	}{
		{"offline", start(t, nil)},
		{"openai upstream", start(t, viaOpenAI(up.srv.URL, nil))},
	} {
		client := openai.NewClient(option.WithBaseURL(p.h.URL+"/v1/"), option.WithAPIKey(tokApp), option.WithMaxRetries(0))
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/chat/stream=%v", p.name, stream), func(t *testing.T) {
				chatToolLoop(t, p.h, client, stream)
			})
			t.Run(fmt.Sprintf("%s/responses/stream=%v", p.name, stream), func(t *testing.T) {
				responsesToolLoop(t, p.h, client, stream)
			})
		}
	}
}

func chatToolLoop(t *testing.T, h *harness, client openai.Client, stream bool) {
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:    "service",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("get_weather Paris")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Description: openai.String("Weather in a city"), Parameters: weatherParams, Strict: openai.Bool(true)})},
	}
	var msg openai.ChatCompletionMessage
	var finish string
	var raw *http.Response
	if stream {
		s := client.Chat.Completions.NewStreaming(ctx, params, option.WithResponseInto(&raw))
		acc := openai.ChatCompletionAccumulator{}
		finished := 0
		for s.Next() {
			acc.AddChunk(s.Current())
			if tc, ok := acc.JustFinishedToolCall(); ok {
				finished++
				if tc.Name != "get_weather" || tc.Arguments != `{"city":"Paris"}` {
					t.Fatalf("finished tool call %+v", tc)
				}
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if finished != 1 {
			t.Fatalf("JustFinishedToolCall fired %d times, want 1", finished)
		}
		msg, finish = acc.Choices[0].Message, acc.Choices[0].FinishReason
	} else {
		c, err := client.Chat.Completions.New(ctx, params, option.WithResponseInto(&raw))
		if err != nil {
			t.Fatal(err)
		}
		msg, finish = c.Choices[0].Message, c.Choices[0].FinishReason
	}
	if finish != "tool_calls" || len(msg.ToolCalls) != 1 || msg.Content != "" {
		t.Fatalf("first turn: finish %q message %+v", finish, msg)
	}
	call := msg.ToolCalls[0]
	if call.Type != "function" || call.Function.Name != "get_weather" || call.Function.Arguments != `{"city":"Paris"}` || !strings.HasPrefix(call.ID, "call_") {
		t.Fatalf("tool call %+v", call)
	}
	r := h.run(checkRunHeaders(t, raw.Header))
	if r.Status != runner.StatusCompleted || r.StatusReason != runner.ReasonToolCalls || len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != call.ID {
		t.Fatalf("run after the call: %+v", r)
	}

	params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage(weatherResult("Paris"), call.ID))
	want := "get_weather returned: " + weatherResult("Paris")
	if stream {
		s := client.Chat.Completions.NewStreaming(ctx, params)
		acc := openai.ChatCompletionAccumulator{}
		for s.Next() {
			acc.AddChunk(s.Current())
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if acc.Choices[0].Message.Content != want || acc.Choices[0].FinishReason != "stop" || len(acc.Choices[0].Message.ToolCalls) != 0 {
			t.Fatalf("final answer %+v", acc.Choices[0])
		}
		return
	}
	c, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if c.Choices[0].Message.Content != want || c.Choices[0].FinishReason != "stop" {
		t.Fatalf("final answer %+v", c.Choices[0])
	}
}

func responsesToolLoop(t *testing.T, h *harness, client openai.Client, stream bool) {
	ctx := context.Background()
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("get_weather Rome", responses.EasyInputMessageRoleUser)}
	params := responses.ResponseNewParams{
		Model: "service",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "get_weather",
			Parameters: weatherParams, Strict: openai.Bool(true)}}},
	}
	// turn sends params as the test's mode says: streamed or one reply.
	turn := func() responses.Response {
		t.Helper()
		if stream {
			return streamResponse(t, client, params)
		}
		r, err := client.Responses.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		return *r
	}
	resp := turn()
	if resp.Status != "completed" || resp.OutputText() != "" || len(resp.Output) != 1 {
		t.Fatalf("first turn: %s", resp.RawJSON())
	}
	call := resp.Output[0].AsFunctionCall()
	if call.Type != "function_call" || call.Name != "get_weather" || call.Arguments != `{"city":"Rome"}` ||
		!strings.HasPrefix(call.ID, "fc_") || !strings.HasPrefix(call.CallID, "call_") || call.Status != "completed" {
		t.Fatalf("function call %s", resp.Output[0].RawJSON())
	}
	cp := call.ToParam()
	out := responses.ResponseInputItemParamOfFunctionCallOutput(weatherResult("Rome"))
	out.OfFunctionCallOutput.CallID = openai.String(call.CallID)
	params.Input.OfInputItemList = append(input, responses.ResponseInputItemUnionParam{OfFunctionCall: &cp}, out)
	resp = turn()
	if want := "get_weather returned: " + weatherResult("Rome"); resp.OutputText() != want || resp.Output[0].Type != "message" {
		t.Fatalf("final answer: %s", resp.RawJSON())
	}
}

// streamResponse reads a streamed response and checks the function call
// events against the final Response: arguments deltas add up to the done
// event's arguments and the item's, in the order the SDKs expect.
func streamResponse(t *testing.T, client openai.Client, params responses.ResponseNewParams) responses.Response {
	t.Helper()
	s := client.Responses.NewStreaming(context.Background(), params)
	var (
		types []string
		args  = map[string]*strings.Builder{}
		done  = map[string]string{}
		final responses.Response
	)
	for s.Next() {
		ev := s.Current()
		if ev.Type != "response.function_call_arguments.delta" && ev.Type != "response.output_text.delta" {
			types = append(types, ev.Type)
		}
		switch ev.Type {
		case "response.output_item.added":
			if it := gjson.Get(ev.RawJSON(), "item"); it.Get("type").Str == "function_call" {
				if it.Get("status").Str != "in_progress" || it.Get("arguments").Str != "" || it.Get("call_id").Str == "" || it.Get("name").Str != "get_weather" {
					t.Fatalf("item added %s", ev.RawJSON())
				}
				args[it.Get("id").Str] = &strings.Builder{}
			}
		case "response.function_call_arguments.delta":
			d := ev.AsResponseFunctionCallArgumentsDelta()
			args[d.ItemID].WriteString(d.Delta)
		case "response.function_call_arguments.done":
			d := ev.AsResponseFunctionCallArgumentsDone()
			done[d.ItemID] = d.Arguments
		case "response.output_item.done":
			if it := gjson.Get(ev.RawJSON(), "item"); it.Get("type").Str == "function_call" &&
				(it.Get("arguments").Str != done[it.Get("id").Str] || it.Get("status").Str != "completed") {
				t.Fatalf("item done %s, arguments done %q", ev.RawJSON(), done[it.Get("id").Str])
			}
		case "response.completed":
			final = ev.AsResponseCompleted().Response
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	for id, b := range args {
		if b.String() != done[id] || b.Len() == 0 {
			t.Fatalf("item %s: deltas %q, done %q", id, b.String(), done[id])
		}
	}
	if len(args) > 0 {
		want := "response.created response.output_item.added response.function_call_arguments.done response.output_item.done response.completed"
		if got := strings.Join(types, " "); got != want {
			t.Fatalf("events %s\nwant   %s", got, want)
		}
	}
	return final
}

// A tool loop through previous_response_id: the second request sends only
// the function_call_output; the call comes from the stored response.
func TestToolLoopPreviousResponse(t *testing.T) {
	h := start(t, nil)
	res := h.do("POST", "/v1/responses", toolResponsesBody+`}`)
	b := body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	id, callID := gjson.GetBytes(b, "id").Str, gjson.GetBytes(b, "output.0.call_id").Str
	res = h.do("POST", "/v1/responses", `{"model":"service","previous_response_id":"`+id+`","input":[{"type":"function_call_output","call_id":"`+callID+`","output":"sunny"}],`+
		`"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]}`)
	b = body(t, res)
	if res.StatusCode != 200 || gjson.GetBytes(b, "output_text").Str != "get_weather returned: sunny" {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
}

// The Vercel AI SDK's tool loop with store on: the second turn names the
// model's call by reference (item_reference to its fc_ item) before the
// call's output, instead of replaying it or chaining previous_response_id.
func TestToolLoopItemReference(t *testing.T) {
	h := start(t, nil)
	res := h.do("POST", "/v1/responses", toolResponsesBody+`}`)
	b := body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	fcID, callID := gjson.GetBytes(b, "output.0.id").Str, gjson.GetBytes(b, "output.0.call_id").Str
	if !strings.HasPrefix(fcID, "fc_") || callID == "" {
		t.Fatalf("first turn's output: %s", b)
	}
	tools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]`
	turn2 := func(ref string) string {
		return `{"model":"service","input":[{"role":"user","content":"get_weather Paris"},{"type":"item_reference","id":"` + ref + `"},` +
			`{"type":"function_call_output","call_id":"` + callID + `","output":"sunny"}],` + tools + `}`
	}
	res = h.do("POST", "/v1/responses", turn2(fcID))
	b = body(t, res)
	if res.StatusCode != 200 || gjson.GetBytes(b, "output_text").Str != "get_weather returned: sunny" {
		t.Fatalf("second turn: %d %s", res.StatusCode, b)
	}

	unknown := fcID[:strings.LastIndexByte(fcID, '_')] + "_7" // the same message, no 8th call
	apiError(t, h.do("POST", "/v1/responses", turn2(unknown)), 400, "item_not_found", "input[1]")
	apiError(t, h.do("POST", "/v1/responses", turn2(fcID), "x-service-tenant-id", "other"), 400, "item_not_found", "input[1]")
}
