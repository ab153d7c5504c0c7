// Package sdkcheck holds the test helpers that check runedge's wire output
// against the official openai-go SDK: the host's framing (filters/framing)
// and the guest library that builds replies (plugins/compat) both produce
// OpenAI objects, and both are checked the same way. Only tests import it.
package sdkcheck

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/packages/respjson"
)

// Keys checks one decoded openai-go object against the schema it was
// generated from: every key marked required (or constant, like "object" and
// "type") is present, every present key decoded into its field's type, and
// no key is unknown to the SDK (which catches misspelt keys) except those
// named in known.
func Keys(t testing.TB, what string, v any, known ...string) {
	t.Helper()
	rv := reflect.ValueOf(v)
	meta := rv.FieldByName("JSON")
	if !meta.IsValid() {
		t.Fatalf("%s: %T has no JSON metadata", what, v)
	}
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Type().Field(i)
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		mf := meta.FieldByName(f.Name)
		if !mf.IsValid() {
			continue
		}
		field := mf.Interface().(respjson.Field)
		_, constant := f.Tag.Lookup("default")
		required := strings.Contains(f.Tag.Get("api"), "required") || constant
		switch raw := field.Raw(); {
		case raw == "" && required:
			t.Errorf("%s: required key %q is missing", what, name)
		case raw != "" && raw != "null" && !field.Valid() && !slices.Contains(known, name):
			t.Errorf("%s: key %q = %s does not decode as %s", what, name, raw, f.Type)
		}
	}
	if extra := meta.FieldByName("ExtraFields"); extra.IsValid() && extra.Len() > 0 {
		for _, k := range extra.MapKeys() {
			if slices.Contains(known, k.String()) {
				continue
			}
			t.Errorf("%s: key %q is not in the SDK's schema", what, k.String())
		}
	}
}

// Decode decodes data into the SDK type T, failing the test when the SDK
// cannot.
func Decode[T any](t testing.TB, data []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("openai-go cannot decode %T: %v\n%s", v, err, data)
	}
	return v
}

// ServiceMetadata checks that a Response (raw JSON) has output_text and
// metadata.service = {session_id, run_id}, which the SDK's typed
// metadata (string values) cannot hold.
func ServiceMetadata(t testing.TB, raw string) {
	t.Helper()
	var r struct {
		OutputText *string `json:"output_text"`
		Metadata   struct {
			Service *struct {
				SessionID *string `json:"session_id"`
				RunID     *string `json:"run_id"`
			} `json:"service"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatalf("response: %v", err)
	}
	if r.OutputText == nil {
		t.Errorf("response: output_text is missing")
	}
	if s := r.Metadata.Service; s == nil || s.SessionID == nil || s.RunID == nil {
		t.Errorf("response: metadata.service {session_id, run_id} is missing: %s", raw)
	}
}
