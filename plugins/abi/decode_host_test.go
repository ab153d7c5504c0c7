//go:build !wasip1

package abi

import (
	"strings"
	"testing"
)

// The host's readers (decode_host.go), which a guest build leaves out.

func TestDecodeRequestOutput(t *testing.T) {
	o, err := DecodeRequestOutput([]byte("{\n  \"request\": {\"input\": [{\"role\": \"user\", \"content\": \"hi\"}],\n \"output_schema\": {\"type\": \"object\"}},\n  \"echo\": {\"a\": [1, 2]}\n}"))
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Request.Input) != 1 || o.Request.Input[0].Content != "hi" || string(o.Request.OutputSchema) != `{"type":"object"}` || string(o.Echo) != `{"a":[1,2]}` {
		t.Errorf("decoded %+v echo %s schema %s", o.Request, o.Echo, o.Request.OutputSchema)
	}
	for out, want := range map[string]string{
		`not json`:                           "not JSON",
		`{"echo":{}}`:                        "no request object",
		`{"request":[]}`:                     "no request object",
		`{"request":{"input":"hi"}}`:         "does not decode",
		`{"request":{"input":[]}}`:           "no input messages",
		`{"request":{"input":[{"role":1}]}}`: "does not decode",
	} {
		if _, err := DecodeRequestOutput([]byte(out)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", out, err, want)
		}
	}
}

func TestNormalizeResult(t *testing.T) {
	got, err := NormalizeResult([]byte("\n{\n  \"object\": \"response\",\n  \"text\": \"a  b\\n\"\n}\n"))
	if err != nil || string(got) != `{"object":"response","text":"a  b\n"}` {
		t.Errorf("NormalizeResult = %s, %v", got, err)
	}
	for out, want := range map[string]string{
		``:                 "not JSON",
		`{"a":`:            "not JSON",
		`{} {}`:            "not JSON",
		`[{"a":1}]`:        "not a JSON object",
		`"a string"`:       "not a JSON object",
		"{\"a\":\"\x01\"}": "not JSON",
	} {
		if _, err := NormalizeResult([]byte(out)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", out, err, want)
		}
	}
}

func TestDecodeStreamOutput(t *testing.T) {
	o, err := DecodeStreamOutput(StreamOutput{Emit: "a\n\"b\"", Hold: "é"}.AppendJSON(nil))
	if err != nil || o != (StreamOutput{Emit: "a\n\"b\"", Hold: "é"}) {
		t.Errorf("round trip: %+v, %v", o, err)
	}
	if o, err := DecodeStreamOutput([]byte(`{"emit":"x"}`)); err != nil || o.Emit != "x" {
		t.Errorf("hold left out: %+v, %v", o, err)
	}
	for _, out := range []string{`x`, `{}`, `{"emit":1}`, `{"emit":"x","hold":null}`, `{"emit":"x"`} {
		if _, err := DecodeStreamOutput([]byte(out)); err == nil {
			t.Errorf("%s: no error", out)
		}
	}
}

func TestInputErrorRoundTrip(t *testing.T) {
	for _, e := range []InputError{
		{Message: "model is required", Param: "model", Code: "missing_model"},
		{Message: "bad \"thing\"\n"},
	} {
		got, err := DecodeInputError(e.AppendJSON(nil))
		want := e
		if want.Code == "" {
			want.Code = DefaultInputErrorCode
		}
		if err != nil || got != want {
			t.Errorf("round trip of %+v: %+v, %v", e, got, err)
		}
	}
	for _, body := range []string{`nope`, `{}`, `{"error":{}}`, `{"error":{"message":""}}`, `{"error":{"message":1}}`, `{"error":"x"}`} {
		if _, err := DecodeInputError([]byte(body)); err == nil {
			t.Errorf("%s: no error", body)
		}
	}
	if e, err := DecodeInputError([]byte(`{"error":{"message":"m","param":null,"extra":1}}`)); err != nil || e.Param != "" {
		t.Errorf("null param: %+v, %v", e, err)
	}
}
