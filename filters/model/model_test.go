package model

import (
	"context"
	"errors"
	"testing"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/filters/filtertest"
)

func TestModel(t *testing.T) {
	chat, resp := filters.ChatCompletions, filters.Responses
	for _, tc := range []struct {
		ep          filters.Endpoint
		body        string
		status      int
		code, param string
		stream, use bool
	}{
		{ep: chat, body: `{"model":"service","messages":[{"role":"user","content":"hi"}]}`},
		{ep: chat, body: `{"model":"service","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`, stream: true, use: true},
		{ep: chat, body: `{"model":"service","messages":[{"role":"user","content":"hi"}],"stream":false,"stream_options":{"include_usage":true}}`},
		{ep: resp, body: `{"model":"service","input":"hi","text":{}}`},
		{ep: resp, body: `{"model":"service","input":[{"role":"user","content":"hi"}],"stream":true}`, stream: true},
		{ep: chat, body: ``, status: 400, code: apierr.CodeInvalidBody},
		{ep: chat, body: `{"model":`, status: 400, code: apierr.CodeInvalidBody},
		{ep: chat, body: `[1,2]`, status: 400, code: apierr.CodeInvalidBody},
		{ep: chat, body: `{"messages":[{"role":"user","content":"hi"}]}`, status: 400, code: apierr.CodeInvalidBody, param: "model"},
		{ep: chat, body: `{"model":7,"messages":[]}`, status: 400, code: apierr.CodeInvalidBody, param: "model"},
		{ep: chat, body: `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, status: 404, code: apierr.CodeModelNotFound, param: "model"},
		{ep: chat, body: `{"model":"service"}`, status: 400, code: apierr.CodeInvalidBody, param: "messages"},
		{ep: chat, body: `{"model":"service","messages":[]}`, status: 400, code: apierr.CodeInvalidBody, param: "messages"},
		{ep: chat, body: `{"model":"service","messages":"hi"}`, status: 400, code: apierr.CodeInvalidBody, param: "messages"},
		{ep: chat, body: `{"model":"service","messages":[{}],"stream":"yes"}`, status: 400, code: apierr.CodeInvalidBody, param: "stream"},
		{ep: chat, body: `{"model":"service","messages":[{}],"stream_options":true}`, status: 400, code: apierr.CodeInvalidBody, param: "stream_options"},
		{ep: resp, body: `{"model":"service"}`, status: 400, code: apierr.CodeInvalidBody, param: "input"},
		{ep: resp, body: `{"model":"service","input":{"role":"user"}}`, status: 400, code: apierr.CodeInvalidBody, param: "input"},
	} {
		x, _ := filtertest.Exchange(tc.ep, tc.body)
		next := &filtertest.Next{}
		err := New().Handle(context.Background(), x, next)
		if tc.status == 0 {
			if err != nil || !next.Called {
				t.Errorf("%s: want pass, got %v", tc.body, err)
				continue
			}
			if x.Stream != tc.stream || x.IncludeUsage != tc.use {
				t.Errorf("%s: stream %v include_usage %v", tc.body, x.Stream, x.IncludeUsage)
			}
			continue
		}
		var e *apierr.Error
		if !errors.As(err, &e) || e.Status != tc.status || e.Code != tc.code || e.Param != tc.param {
			t.Errorf("%s: want %d %s param %q, got %v (param %q)", tc.body, tc.status, tc.code, tc.param, err, paramOf(e))
		}
		if next.Called {
			t.Errorf("%s: next called after refusal", tc.body)
		}
	}
}

func paramOf(e *apierr.Error) string {
	if e == nil {
		return ""
	}
	return e.Param
}

func BenchmarkModel(b *testing.B) {
	body := `{"model":"service","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"What is the capital of France?"}],"stream":true,"stream_options":{"include_usage":true}}`
	x, _ := filtertest.Exchange(filters.ChatCompletions, body)
	next := &filtertest.Next{}
	m := New()
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Handle(context.Background(), x, next); err != nil {
			b.Fatal(err)
		}
	}
}
