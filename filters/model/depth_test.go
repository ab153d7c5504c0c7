package model

import (
	"errors"
	"strings"
	"testing"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
)

// TestDepthNamesTheField: one scan bounds every field's nesting, and the
// refusal names the field that nests too deep.
func TestDepthNamesTheField(t *testing.T) {
	deep := strings.Repeat("[", MaxBodyDepth) + strings.Repeat("]", MaxBodyDepth)
	for _, tc := range []struct {
		ep                filters.Endpoint
		body, code, param string
	}{
		{filters.Responses, `{"model":"service","input":"x","metadata":{"a":` + deep + `}}`, apierr.CodeInvalidBody, "metadata"},
		{filters.Responses, `{"model":"service","input":[{"role":"user","content":` + deep + `}]}`, apierr.CodeInvalidBody, "input[0].content"},
		{filters.Responses, `{"model":"service","input":"x","text":{"format":{"schema":` + deep + `}}}`, apierr.CodeInvalidSchema, "text.format.schema"},
		{filters.ChatCompletions, `{"model":"service","messages":[{}],"tools":[{"function":{"parameters":` + deep + `}}]}`, apierr.CodeInvalidSchema, "tools[0].function.parameters"},
		{filters.ChatCompletions, `{"x":` + deep + `}`, apierr.CodeInvalidBody, "x"},
		{filters.ChatCompletions, "[" + deep + "]", apierr.CodeInvalidBody, ""},
	} {
		err := checkDepth(tc.ep, []byte(tc.body))
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != 400 || e.Code != tc.code || e.Param != tc.param {
			t.Errorf("%.80s: got %v (param %q), want 400 %s param %q", tc.body, err, paramOf(e), tc.code, tc.param)
		}
	}
	ok := strings.Repeat("[", MaxBodyDepth-1) + strings.Repeat("]", MaxBodyDepth-1)
	if err := checkDepth(filters.Responses, []byte(`{"a":`+ok+`}`)); err != nil {
		t.Errorf("a body %d levels deep: %v", MaxBodyDepth, err)
	}
}

// BenchmarkDepthScan is the nesting check alone on BenchmarkModel's body:
// its share of the stage's cost per request.
func BenchmarkDepthScan(b *testing.B) {
	body := []byte(`{"model":"service","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"What is the capital of France?"}],"stream":true,"stream_options":{"include_usage":true}}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := checkDepth(filters.ChatCompletions, body); err != nil {
			b.Fatal(err)
		}
	}
}
