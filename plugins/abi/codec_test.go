package abi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/runedge/runedge/runner/native"
)

// awkward strings: escapes, non-ASCII, JavaScript line separators, invalid
// UTF-8 (written as U+FFFD).
var awkward = []string{"", "plain", "q\"b\\s/\n\r\t\b\f\x00\x1f", "é 漢字 🙂 \u2028\u2029", "bad \xff byte"}

func valid(s string) string { return strings.ToValidUTF8(s, "\ufffd") }

// What the host writes, the guest reads back, and encoding/json agrees.
func TestRequestInputRoundTrip(t *testing.T) {
	for _, s := range awkward {
		in := RequestInput{Endpoint: EndpointChat, TenantID: s, Actor: Actor{ID: s, Type: "user", Name: s},
			Body: []byte(`{"model":"service","messages":[]}`)}
		b := in.AppendJSON(nil)
		var std struct {
			Endpoint string `json:"endpoint"`
			TenantID string `json:"tenant_id"`
			Actor    struct{ ID, Type, Name string }
			Body     json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(b, &std); err != nil {
			t.Fatalf("%s: not JSON: %v", b, err)
		}
		got, err := ParseRequestInput(b)
		if err != nil {
			t.Fatal(err)
		}
		want := in
		want.TenantID, want.Actor.ID, want.Actor.Name = valid(s), valid(s), valid(s)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip of %q:\n got %+v\nwant %+v", s, got, want)
		}
		if std.TenantID != want.TenantID || std.Actor.Name != want.Actor.Name || string(std.Body) != string(in.Body) {
			t.Errorf("encoding/json reads %+v", std)
		}
	}
}

func TestResultInputRoundTrip(t *testing.T) {
	for _, s := range awkward {
		for _, status := range []string{ResultCompleted, ResultInProgress} {
			in := ResultInput{Endpoint: EndpointResponses, ID: "resp_1", MessageID: "msg_1", Created: 1700000000, SessionID: "sess_1", RunID: "run_1",
				Model: "service", Status: status, Echo: []byte(`{"k":"v"}`)}
			if status == ResultCompleted {
				in.Result = native.Result{Text: s, FinishReason: "length", Usage: native.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3},
					ToolCalls: []native.ToolCall{{ID: "call_1", Name: "f", Arguments: `{"q":"` + s + `"}`}}}
			}
			b := in.AppendJSON(nil)
			if !json.Valid(b) {
				t.Fatalf("not JSON: %s", b)
			}
			got, err := ParseResultInput(b)
			if err != nil {
				t.Fatal(err)
			}
			want := in
			want.Result.Text = valid(s)
			if len(want.Result.ToolCalls) > 0 {
				want.Result.ToolCalls = []native.ToolCall{{ID: "call_1", Name: "f", Arguments: valid(`{"q":"` + s + `"}`)}}
			}
			if status == ResultInProgress {
				want.Result = native.Result{}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
			}
		}
	}
	// An empty echo is sent as {}, usage null while in progress.
	b := (&ResultInput{ID: "x", Status: ResultInProgress}).AppendJSON(nil)
	if !strings.Contains(string(b), `"usage":null}`) || !strings.HasSuffix(string(b), `"echo":{}}`) {
		t.Errorf("in-progress input: %s", b)
	}
}

func TestViewResultInputRefuses(t *testing.T) {
	for in, want := range map[string]string{
		`[]`:                                     "not a JSON object",
		`{"model":"m","created":1}`:              "string id",
		`{"id":"","model":"m","created":1}`:      "string id",
		`{"id":"x","created":1}`:                 "string model",
		`{"id":"x","model":"m","created":"now"}`: "numeric created",
	} {
		if _, err := ViewResultInput([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
	// Only the parts of the usage: the total is their sum.
	v, err := ViewResultInput([]byte(`{"id":"x","model":"m","created":1,"result":{"usage":{"input_tokens":4,"output_tokens":5}}}`))
	if err != nil || v.ReadUsage() != (native.Usage{InputTokens: 4, OutputTokens: 5, TotalTokens: 9}) {
		t.Errorf("usage %+v, %v", v.ReadUsage(), err)
	}
}
