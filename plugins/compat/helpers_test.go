package compat

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/runedge/runedge/internal/golden"
	"github.com/tidwall/gjson"
)

// envelope wraps a client body in the MapRequest input the host builds.
func envelope(endpoint, body string) []byte {
	return []byte(`{"endpoint":"` + endpoint + `","tenant_id":"ten_1","actor":{"id":"u_1","type":"user","name":"Ada"},"body":` + body + `}`)
}

// compact returns s without insignificant whitespace, failing on bad JSON.
func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("bad JSON in test: %v\n%s", err, s)
	}
	return b.String()
}

// mapOK maps body and returns its request and echo as compact JSON.
func mapOK(t *testing.T, endpoint, body string) (request, echo string) {
	t.Helper()
	out, err := MapRequest(envelope(endpoint, body))
	if err != nil {
		t.Fatalf("MapRequest: %v", err)
	}
	if !json.Valid(out) {
		t.Fatalf("MapRequest output is not valid JSON: %s", out)
	}
	return gjson.GetBytes(out, "request").Raw, gjson.GetBytes(out, "echo").Raw
}

// mapInvalid maps body, which must be refused as invalid input, and
// returns the error.
func mapInvalid(t *testing.T, endpoint, body string) *InputError {
	t.Helper()
	ie := mapRefused(t, endpoint, body)
	if ie.Code != CodeInvalidBody && ie.Code != CodeUnsupportedParameter {
		t.Fatalf("InputError needs code invalid_body or unsupported_parameter: %+v", ie)
	}
	return ie
}

// mapRefused maps body and returns the InputError it must fail with.
func mapRefused(t *testing.T, endpoint, body string) *InputError {
	t.Helper()
	out, err := MapRequest(envelope(endpoint, body))
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("want *InputError, got %v (output %s)", err, out)
	}
	if ie.Code == "" || ie.Message == "" {
		t.Fatalf("InputError needs a code and a message: %+v", ie)
	}
	return ie
}

// checkGolden compares got with the golden file, or rewrites it with -update
// (internal/golden).
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	golden.Check(t, path, got)
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// The ids and time of the result inputs under testdata/result.
const (
	streamChatID     = "chatcmpl-0123456789abcdefABCDEF"
	streamResponseID = "resp_0123456789abcdefABCDEF"
	streamCreated    = 1700000000
)

// mapResultFile maps the result input in the file at path.
func mapResultFile(t testing.TB, path string) []byte {
	t.Helper()
	out, err := MapResult(mustRead(t, path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}
