package server

import (
	"net/http"
	"testing"

	"github.com/tidwall/gjson"
)

// runCount is how many runs the store holds, read with the admin token.
func runCount(t *testing.T, h *harness) int {
	t.Helper()
	return len(gjson.GetBytes(body(t, h.do("GET", "/runner/v1/runs?limit=100", "", "Authorization", "Bearer "+tokAdmin)), "data").Array())
}

// POST /v1/responses/input_tokens counts a body's input as the run of the
// same body reports it (offline provider), refuses what POST /v1/responses
// refuses, and creates no run.
func TestInputTokens(t *testing.T) {
	h := stateServer(t)
	counts := openResponses(t, "TokenCountsResource")
	count := func(b string) int64 {
		t.Helper()
		res := h.do("POST", "/v1/responses/input_tokens", b, "x-service-tenant-id", "t1")
		out := body(t, res)
		if res.StatusCode != 200 {
			t.Fatalf("input_tokens %s: %d %s", b, res.StatusCode, out)
		}
		if err := counts.Validate(out); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return gjson.GetBytes(out, "input_tokens").Int()
	}
	post := func(b string) string { t.Helper(); return postT1(t, h, b) }

	first := post(`{"model":"service","input":"alpha beta gamma","instructions":"be brief"}`)
	for _, b := range []string{
		`{"model":"service","input":"alpha beta gamma","instructions":"be brief"}`,
		`{"model":"service","input":[{"role":"user","content":[{"type":"input_text","text":"one two"}]},{"role":"assistant","content":"three"},{"role":"user","content":"four five six"}]}`,
		`{"model":"service","input":"and then","previous_response_id":"` + gjson.Get(first, "id").Str + `"}`,
	} {
		runs := runCount(t, h)
		n := count(b)
		if runCount(t, h) != runs {
			t.Errorf("input_tokens created a run")
		}
		if want := gjson.Get(post(b), "usage.input_tokens").Int(); n != want || n == 0 {
			t.Errorf("%s: input_tokens %d, the run reports %d", b, n, want)
		}
	}

	runs := runCount(t, h)
	for _, c := range []struct {
		name, body, code, param string
		status                  int
	}{
		{"no input", `{"model":"service"}`, "invalid_body", "input", 400},
		{"not JSON", `{"model":`, "invalid_body", "", 400},
		{"another model", `{"model":"gpt-x","input":"x"}`, "model_not_found", "model", 404},
		{"truncation auto", `{"model":"service","input":"x","truncation":"auto"}`, "unsupported_parameter", "truncation", 400},
		{"unknown previous response", `{"model":"service","input":"x","previous_response_id":"resp_unknown"}`, "previous_response_not_found", "previous_response_id", 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := h.do("POST", "/v1/responses/input_tokens", c.body, "x-service-tenant-id", "t1")
			b := body(t, res)
			if res.StatusCode != c.status || gjson.GetBytes(b, "error.code").Str != c.code ||
				(c.param != "" && gjson.GetBytes(b, "error.param").Str != c.param) {
				t.Errorf("%d %s", res.StatusCode, b)
			}
		})
	}
	if res := h.do("POST", "/v1/responses/input_tokens", `{"model":"service","input":"x"}`, "Authorization", "-"); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a token: %d", res.StatusCode)
	}
	if res := h.do("GET", "/v1/responses/input_tokens", ""); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", res.StatusCode)
	}
	if runCount(t, h) != runs {
		t.Errorf("refused input_tokens requests created runs")
	}
}

// With the openai provider the count is the documented estimate, and the
// upstream is not asked.
func TestInputTokensOpenAIEstimate(t *testing.T) {
	up := newScripted(t, wholeOf("never"))
	h := start(t, viaOpenAI(up.srv.URL, nil))
	res := h.do("POST", "/v1/responses/input_tokens", `{"model":"service","input":"Hello there, how are you today?"}`)
	b := body(t, res)
	// One user message: 3 + ceil((4+31)/4) = 12, plus 3 for the reply.
	if res.StatusCode != 200 || gjson.GetBytes(b, "input_tokens").Int() != 15 {
		t.Errorf("%d %s", res.StatusCode, b)
	}
	if n := len(up.requests()); n != 0 {
		t.Errorf("the upstream got %d requests", n)
	}
}
