package runner

import (
	"reflect"
	"testing"
)

// A stored response's output items are the Response the client got: its
// message text (not the result's), its calls with their call ids, a
// custom call's input, a namespaced call under its native name, and its
// reasoning item; without a Response object, the result.
func TestOutputItemsFromTheResponse(t *testing.T) {
	res := &Result{Text: "write to a@b.example", ToolCalls: []ToolCall{
		{ID: "c1", Name: "get", Arguments: `{"x":1}`},
		{ID: "c2", Name: "fs__read", Arguments: `{}`},
		{ID: "c3", Name: "apply_patch", Arguments: `{"input":"P"}`}}}
	object := []byte(`{"id":"resp_R","object":"response","output":[` +
		`{"id":"msg_R","type":"message","status":"completed","role":"assistant","phase":"final_answer","content":[{"type":"output_text","text":"write to [redacted email]","annotations":[]}]},` +
		`{"id":"fc_R_0","type":"function_call","status":"completed","call_id":"c1","name":"get","arguments":"{\"x\":1}"},` +
		`{"id":"fc_R_1","type":"function_call","status":"completed","call_id":"c2","namespace":"fs","name":"read","arguments":"{}"},` +
		`{"id":"fc_R_2","type":"custom_tool_call","status":"completed","call_id":"c3","name":"apply_patch","input":"P"},` +
		`{"id":"rs_R","type":"reasoning","summary":[{"type":"summary_text","text":"S"}]}]}`)
	got := outputItems("run_R", object, res, "")
	want := []Item{
		{ID: "msg_R", RunID: "run_R", Output: true, Message: Message{Role: "assistant", Content: "write to [redacted email]", Phase: "final_answer",
			ToolCalls: []ToolCall{{ID: "c1", Name: "get", Arguments: `{"x":1}`}, {ID: "c2", Name: "fs__read", Arguments: `{}`},
				{ID: "c3", Name: "apply_patch", Arguments: "P", Custom: true}}}},
		{ID: "rs_R", RunID: "run_R", Output: true, Message: Message{Role: RoleReasoning, Reasoning: &Reasoning{ID: "rs_R", Summary: []string{"S"}}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items\n got %+v\nwant %+v", got, want)
	}

	for _, obj := range [][]byte{nil, []byte(`{"object":"response.compaction","output":[]}`), []byte(`{"object":"chat.completion","choices":[]}`)} {
		got = outputItems("run_R", obj, res, "")
		if len(got) != 1 || got[0].ID != "msg_R" || got[0].Message.Content != res.Text || len(got[0].Message.ToolCalls) != 3 {
			t.Errorf("object %s: items %+v; want the result", obj, got)
		}
	}
}

// BenchmarkOutputItems: what reading the Response object costs a stored
// response's end, on the golden reply (host/server/testdata/golden).
func BenchmarkOutputItems(b *testing.B) {
	object := []byte(`{"id":"resp_R","object":"response","created_at":1,"completed_at":1,"status":"completed","error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"model":"service","output":[{"id":"msg_R","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"The quick brown fox jumps over the lazy dog, again and again, until the story ends.","annotations":[],"logprobs":[]}]}],"output_text":"The quick brown fox jumps over the lazy dog, again and again, until the story ends.","parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"store":true,"temperature":1,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1,"truncation":"disabled","background":false,"usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":0},"output_tokens":4,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":7},"user":null,"metadata":{"service":{"session_id":"sess_S","run_id":"run_R"}},"access_programs":null}`)
	res := &Result{Text: "x"}
	b.ReportAllocs()
	for b.Loop() {
		outputItems("run_R", object, res, "")
	}
}
