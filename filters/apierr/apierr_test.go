package apierr_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/runedge/runedge/filters/apierr"
)

// errorsToRender are errors of every kind the chain sends: each
// constructor, an unexpected error through From, and one error per row of
// the error catalog (catalog.go, the table in docs/api.md) built from its parts.
func errorsToRender() []*apierr.Error {
	es := []*apierr.Error{
		apierr.InvalidBody("messages", "messages is required"),
		apierr.InvalidBody("", "the request body is not valid JSON"),
		apierr.InvalidHeader("x-service-actor-id", "too long"),
		apierr.NotFound("no run %s", "run_x"),
		apierr.Unavailable("shutting down", 5, errors.New("draining")),
		apierr.From(errors.New("pq: connection refused to 10.0.0.7")),
		apierr.From(fmt.Errorf("wrapped: %w", apierr.InvalidBody("input", "input is required"))),
	}
	for _, r := range []struct {
		status    int
		typ, code string
	}{
		{400, apierr.TypeInvalidRequest, apierr.CodeInvalidBody},
		{401, apierr.TypeAuthentication, apierr.CodeInvalidAPIKey},
		{403, apierr.TypePermission, apierr.CodeTenantForbidden},
		{404, apierr.TypeInvalidRequest, apierr.CodeModelNotFound},
		{405, apierr.TypeInvalidRequest, apierr.CodeMethodNotAllowed},
		{409, apierr.TypeAPI, apierr.CodeRunCancelled},
		{413, apierr.TypeInvalidRequest, apierr.CodeBodyTooLarge},
		{415, apierr.TypeInvalidRequest, apierr.CodeUnsupportedEncoding},
		{429, apierr.TypeRateLimit, apierr.CodeRateLimited},
		{500, apierr.TypeServer, apierr.CodeRunFailed},
		{502, apierr.TypeAPI, apierr.CodeProviderError},
		{503, apierr.TypeAPI, apierr.CodeUnavailable},
		{504, apierr.TypeAPI, apierr.CodeTimeout},
	} {
		e := apierr.New(r.code, "a message")
		if e.Status != r.status || e.Type != r.typ {
			panic(fmt.Sprintf("apierr.New(%s): %d %s, want %d %s", r.code, e.Status, e.Type, r.status, r.typ))
		}
		es = append(es, e)
	}
	return es
}

// Every error renders as the OpenAI error body: {"error":{...}} with all
// four keys, param a string or null (never missing), and the bare object
// alike.
func TestRendersOpenAIShape(t *testing.T) {
	for _, e := range errorsToRender() {
		var body map[string]json.RawMessage
		if err := json.Unmarshal(e.Body(), &body); err != nil || len(body) != 1 || body["error"] == nil {
			t.Errorf("%s: body %s, want one key, error", e.Code, e.Body())
			continue
		}
		for _, raw := range [][]byte{body["error"], e.Object()} {
			var obj map[string]any
			if err := json.Unmarshal(raw, &obj); err != nil {
				t.Fatalf("%s: %s: %v", e.Code, raw, err)
			}
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, []string{"code", "message", "param", "type"}) {
				t.Errorf("%s: keys %q, want code, message, param, type", e.Code, keys)
			}
			if obj["code"] != e.Code || obj["type"] != e.Type || obj["message"] != e.Message || e.Code == "" || e.Type == "" || e.Message == "" {
				t.Errorf("%s: rendered %s from %+v", e.Code, raw, e)
			}
			switch p := obj["param"]; {
			case e.Param == "" && p != nil:
				t.Errorf("%s: param %v, want null", e.Code, p)
			case e.Param != "" && p != e.Param:
				t.Errorf("%s: param %v, want %q", e.Code, p, e.Param)
			}
		}
		if e.Status < 400 || e.Status > 599 || http.StatusText(e.Status) == "" {
			t.Errorf("%s: status %d", e.Code, e.Status)
		}
	}
}

// The constructors give the status, type and code of their row.
func TestConstructors(t *testing.T) {
	for _, c := range []struct {
		e                *apierr.Error
		status           int
		typ, code, param string
	}{
		{apierr.InvalidBody("model", "model is required"), 400, apierr.TypeInvalidRequest, apierr.CodeInvalidBody, "model"},
		{apierr.InvalidHeader("x-service-tenant-id", "bad"), 400, apierr.TypeInvalidRequest, apierr.CodeInvalidHeader, "x-service-tenant-id"},
		{apierr.NotFound("no such path"), 404, apierr.TypeInvalidRequest, apierr.CodeNotFound, ""},
		{apierr.Unavailable("busy", 1, nil), 503, apierr.TypeAPI, apierr.CodeUnavailable, ""},
		{apierr.New(apierr.CodeRateLimited, "slow down"), 429, apierr.TypeRateLimit, apierr.CodeRateLimited, ""},
		{apierr.New(apierr.CodePluginError, "trapped"), 500, apierr.TypeServer, apierr.CodePluginError, ""},
		{apierr.SwapRefused("fails its self-test"), 422, apierr.TypeInvalidRequest, apierr.CodePluginError, ""},
		{apierr.Param(apierr.CodeInvalidSchema, "text.format.schema", "too deep"), 400, apierr.TypeInvalidRequest, apierr.CodeInvalidSchema, "text.format.schema"},
	} {
		if c.e.Status != c.status || c.e.Type != c.typ || c.e.Code != c.code || c.e.Param != c.param {
			t.Errorf("%+v, want %d %s %s param %q", c.e, c.status, c.typ, c.code, c.param)
		}
	}
	if m := apierr.NotFound("no run %s", "run_1").Message; m != "no run run_1" {
		t.Errorf("NotFound formats its message: %q", m)
	}
}

// From finds an *Error anywhere in a chain; anything else is a 500 whose
// body says nothing of the cause, which stays reachable for the log.
func TestFrom(t *testing.T) {
	inner := apierr.InvalidBody("input", "input is required")
	if got := apierr.From(fmt.Errorf("stage: %w", inner)); got != inner {
		t.Errorf("From(wrapped) = %+v, want the wrapped error", got)
	}
	cause := errors.New("dial tcp 10.0.0.7:5432: connection refused")
	e := apierr.From(fmt.Errorf("store: %w", cause))
	if e.Status != 500 || e.Type != apierr.TypeServer {
		t.Errorf("From(unexpected) = %d %s, want 500 %s", e.Status, e.Type, apierr.TypeServer)
	}
	if strings.Contains(string(e.Body()), "10.0.0.7") {
		t.Errorf("the body shows the cause: %s", e.Body())
	}
	if !errors.Is(e, cause) {
		t.Error("the cause is not kept for the log (errors.Is)")
	}
}

// Retry-After and Allow go out as headers, and only when set.
func TestHeader(t *testing.T) {
	h := http.Header{}
	apierr.Unavailable("draining", 7, nil).Header(h)
	if h.Get("Retry-After") != "7" || h.Get("Allow") != "" {
		t.Errorf("503: headers %v", h)
	}
	h = http.Header{}
	e := apierr.New(apierr.CodeMethodNotAllowed, "use POST")
	e.Allow = "POST"
	e.Header(h)
	if h.Get("Allow") != "POST" || h.Get("Retry-After") != "" {
		t.Errorf("405: headers %v", h)
	}
	h = http.Header{}
	apierr.InvalidBody("", "x").Header(h)
	if len(h) != 0 {
		t.Errorf("400: headers %v", h)
	}
}
