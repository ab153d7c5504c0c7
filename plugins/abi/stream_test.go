package abi

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
			// encoding/json takes null for a string or a bool and leaves
			// it unset; the reader holds the host to the shape it writes
			// (no null: TestParseStreamInputRejects), so null is an error
			// here too.
			if string(bytes.TrimSpace(raw)) == "null" {
				return StreamInput{}, errors.New(name + " is null")
			}
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

// The host sends valid JSON, which the guest reader does not re-check (see
// plugins/guestjson); what it does check is the input's shape.
func TestParseStreamInputRejects(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `"text"`, `{"text":`, `{"text":"x"`, `{"final":"yes"}`, `{"text":12}`, `{"id":null}`, `{"endpoint":{}}`,
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
		// The reader trusts the host for validity: it lets control
		// characters and invalid UTF-8 through, which encoding/json
		// rejects or replaces, and reads malformed input as less. Compare
		// what encoding/json takes.
		if !utf8.Valid(in) {
			return
		}
		if wantErr == nil && err != nil {
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
