package filters

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters/apierr"
)

// An error is rendered once, where the reply stands: a JSON body with its
// status and headers while nothing is written; an SSE event once a stream
// has started (the error body on chat, a typed error event continuing the
// sequence on responses); nothing after a complete JSON reply.
func TestReplyError(t *testing.T) {
	e := apierr.Unavailable("shutting down", 3, nil)

	rec := httptest.NewRecorder()
	NewReply(rec, ChatCompletions).Error(e)
	if rec.Code != 503 || rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Retry-After") != "3" ||
		gjson.Get(rec.Body.String(), "error.code").Str != apierr.CodeUnavailable {
		t.Errorf("JSON: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}

	rec = httptest.NewRecorder()
	r := NewReply(rec, ChatCompletions)
	r.OpenStream()
	r.Error(apierr.InvalidBody("messages", "bad"))
	if got := rec.Body.String(); got != "data: "+string(apierr.InvalidBody("messages", "bad").Body())+"\n\n" {
		t.Errorf("chat stream: %q", got)
	}

	rec = httptest.NewRecorder()
	r = NewReply(rec, Responses)
	r.OpenStream()
	r.NextSeq()
	r.NextSeq()
	r.Error(e)
	body := rec.Body.String()
	data := strings.TrimPrefix(strings.TrimSuffix(body, "\n\n"), "event: error\ndata: ")
	ev := gjson.Parse(data)
	if !strings.HasPrefix(body, "event: error\n") || ev.Get("type").Str != "error" || ev.Get("code").Str != apierr.CodeUnavailable ||
		ev.Get("sequence_number").Int() != 2 || ev.Get("param").Type != gjson.Null || !ev.Get("message").Exists() {
		t.Errorf("responses stream: %q", body)
	}

	rec = httptest.NewRecorder()
	r = NewReply(rec, Responses)
	r.JSON(200, []byte(`{}`))
	r.Error(e)
	if rec.Code != 200 || rec.Body.String() != `{}` {
		t.Errorf("after a complete reply: %d %q", rec.Code, rec.Body)
	}
}
