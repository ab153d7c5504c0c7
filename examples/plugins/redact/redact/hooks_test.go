package redact

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/runedge/runedge/plugins/compat"
	"github.com/runedge/runedge/plugins/guestjson"
	"github.com/tidwall/gjson"
)

// result is a map_result input for endpoint with the given assistant text.
func result(endpoint, text string) []byte {
	in := []byte(`{"endpoint":"` + endpoint + `","id":"id_1","message_id":"msg_1","created":1700000000,"model":"service",` +
		`"status":"completed","result":{"text":`)
	in = guestjson.AppendString(in, text)
	return append(in, `,"finish_reason":"stop","usage":{"input_tokens":3,"output_tokens":4}},"echo":{}}`...)
}

func TestMapResult(t *testing.T) {
	text := "Reach \"Jane\" at jane@example.com\nor +1 555 123 4567 \u2028 ok"
	want := "Reach \"Jane\" at " + E + "\nor " + P + " \u2028 ok"
	for endpoint, path := range map[string]string{
		compat.EndpointChat:      "choices.0.message.content",
		compat.EndpointResponses: "output.0.content.0.text",
	} {
		in := result(endpoint, text)
		got, err := MapResult(in)
		if err != nil {
			t.Fatalf("%s: %v", endpoint, err)
		}
		if !json.Valid(got) {
			t.Fatalf("%s: invalid JSON %s", endpoint, got)
		}
		if s := gjson.GetBytes(got, path).String(); s != want {
			t.Errorf("%s: %s = %q, want %q", endpoint, path, s, want)
		}
		// Only the text may differ from the default mapping.
		plain, err := compat.MapResult(result(endpoint, want))
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(t, got, plain) {
			t.Errorf("%s: reply differs from the default mapping beyond the text:\n%s\n%s", endpoint, got, plain)
		}
	}
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// A reply with nothing to redact comes back exactly as compat made it.
func TestMapResultUnchanged(t *testing.T) {
	in := result(compat.EndpointChat, "Nothing personal here.")
	got, err := MapResult(in)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := compat.MapResult(in)
	if !bytes.Equal(got, want) {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestMapResultRefusesUnknownEndpoint(t *testing.T) {
	if _, err := MapResult(result("embeddings", "x")); err == nil {
		t.Error("want an error for an unknown endpoint")
	}
}

// Several choices and several content parts are all redacted.
func TestReplyEveryTextField(t *testing.T) {
	body := []byte(`{"choices":[{"message":{"content":"a@example.com"}},{"message":{"content":null}},{"message":{"content":"b@example.com"}}],` +
		`"output":[{"content":[{"text":"555-123-4567"},{"text":"ok"}]},{"content":[{"text":"c@example.com"}]}]}`)
	got, err := Reply(body)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"choices":[{"message":{"content":"` + E + `"}},{"message":{"content":null}},{"message":{"content":"` + E + `"}}],` +
		`"output":[{"content":[{"text":"` + P + `"},{"text":"ok"}]},{"content":[{"text":"` + E + `"}]}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestSelfTest(t *testing.T) {
	if err := SelfTest(); err != nil {
		t.Fatal(err)
	}
}
