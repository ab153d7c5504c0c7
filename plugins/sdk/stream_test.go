package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// decodeStd decodes a map_stream input with encoding/json, the reference
// ParseStreamInput must agree with. Fields are looked up by their exact
// names, as the ABI defines them (encoding/json's struct decoding would
// also take "Text" for "text").
func decodeStd(in []byte) (StreamInput, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(in, &fields); err != nil {
		return StreamInput{}, err
	}
	if fields == nil {
		return StreamInput{}, errors.New("null")
	}
	var si StreamInput
	for name, dst := range map[string]any{"endpoint": &si.Endpoint, "id": &si.ID, "tenant_id": &si.TenantID, "text": &si.Text, "final": &si.Final} {
		if raw, ok := fields[name]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				return StreamInput{}, err
			}
		}
	}
	return si, nil
}

var streamInputs = []string{
	`{"endpoint":"chat.completions","id":"chatcmpl-1","tenant_id":"acme","text":"Hello wor","final":false}`,
	`{"endpoint":"responses","id":"resp_1","tenant_id":"t","text":"","final":true}`,
	` { "text" : "spaced" , "final" : true } `,
	`{}`,
	`{"text":"esc \" \\ \/ \b \f \n \r \t \u00e9 \u6f22 \ud83d\ude42 end"}`,
	`{"text":"lone \ud83d surrogate, then \ud83dx and \ude42"}`,
	`{"text":"raw é 漢字 🙂"}`,
	`{"future":{"nested":[1,2.5e3,-0.1,"s",true,false,null,{}],"x":[]},"text":"kept","n":12,"z":null}`,
	`{"text":"dup","text":"last wins"}`,
}

func TestParseStreamInputAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range streamInputs {
		got, err := ParseStreamInput([]byte(in))
		want, wantErr := decodeStd([]byte(in))
		if err != nil || wantErr != nil {
			t.Errorf("%s: ParseStreamInput error %v, encoding/json error %v", in, err, wantErr)
			continue
		}
		if got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", in, got, want)
		}
	}
}

func TestParseStreamInputRejects(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `"text"`, `{"text":}`, `{"text":"unterminated}`, `{"text":"x"`, `{"text":"x",}`,
		`{"text" "x"}`, `{"text":"x"} trailing`, `{"final":"yes"}`, `{"text":12}`, `{"text":"bad \q escape"}`,
		`{"text":"bad \u12 escape"}`, `{"other":tru}`, `{"other":-}`, `{"other":[1 2]}`, `{"other":{"a" 1}}`,
		`{"other":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
	} {
		if si, err := ParseStreamInput([]byte(in)); err == nil || !strings.HasPrefix(err.Error(), "map_stream input: ") {
			t.Errorf("ParseStreamInput(%s) = %+v, %v; want an error", in, si, err)
		}
	}
}

func FuzzParseStreamInput(f *testing.F) {
	for _, in := range streamInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := ParseStreamInput(in)
		want, wantErr := decodeStd(in)
		// The scanner is lenient where checking would cost speed: it lets
		// control characters and invalid UTF-8 through, which
		// encoding/json rejects or replaces. Compare the rest.
		if !utf8.Valid(in) {
			return
		}
		deep := bytes.Count(in, []byte("["))+bytes.Count(in, []byte("{")) > maxJSONDepth // refused on purpose
		if wantErr == nil && err != nil && !deep {
			t.Errorf("%q: ParseStreamInput rejects what encoding/json takes: %v", in, err)
		}
		if err == nil && wantErr == nil && got != want {
			t.Errorf("%q:\n got %+v\nwant %+v", in, got, want)
		}
	})
}

func TestStreamOutputAppendJSON(t *testing.T) {
	for _, o := range []StreamOutput{
		{},
		{Emit: "plain text ", Hold: "wor"},
		{Emit: "quote \" backslash \\ newline \n tab \t nul \x00 del \x7f", Hold: "é 漢字 🙂"},
		{Emit: "bad \xff byte"},
	} {
		b := o.AppendJSON([]byte("prefix:"))
		if !strings.HasPrefix(string(b), "prefix:") {
			t.Fatalf("AppendJSON dropped the prefix: %s", b)
		}
		var got struct{ Emit, Hold *string }
		if err := json.Unmarshal(b[len("prefix:"):], &got); err != nil || got.Emit == nil || got.Hold == nil {
			t.Fatalf("AppendJSON(%+v) = %s, not the output object: %v", o, b, err)
		}
		if want := strings.ToValidUTF8(o.Emit, "\ufffd"); *got.Emit != want || *got.Hold != o.Hold {
			t.Errorf("round trip of %+v gave emit %q hold %q", o, *got.Emit, *got.Hold)
		}
	}
}

func TestMapStreamFunc(t *testing.T) {
	var seen StreamInput
	hook := MapStreamFunc(func(in StreamInput) (StreamOutput, error) {
		seen = in
		if in.Text == "fail" {
			return StreamOutput{}, errors.New("broken")
		}
		return StreamOutput{Emit: "<" + in.Text[:1], Hold: in.Text[1:]}, nil
	})
	out, err := hook([]byte(`{"endpoint":"responses","id":"r","tenant_id":"t","text":"abc","final":false}`))
	if err != nil || string(out) != `{"emit":"<a","hold":"bc"}` {
		t.Errorf("hook = %s, %v", out, err)
	}
	if seen != (StreamInput{Endpoint: "responses", ID: "r", TenantID: "t", Text: "abc"}) {
		t.Errorf("fn saw %+v", seen)
	}
	// On the final call, what fn still holds is emitted.
	if out, err := hook([]byte(`{"text":"xyz","final":true}`)); err != nil || string(out) != `{"emit":"<xyz","hold":""}` {
		t.Errorf("final: hook = %s, %v", out, err)
	}
	if _, err := hook([]byte(`{"text":"fail"}`)); err == nil || err.Error() != "broken" {
		t.Errorf("failing fn: error = %v", err)
	}
	if _, err := hook([]byte(`not json`)); err == nil {
		t.Error("malformed input: no error")
	}
}
