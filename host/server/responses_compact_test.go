package server

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/runner"
)

// A stored response with a long answer (its object kept compact, the
// output text put back from the output item) is returned by GET byte for
// byte as the client received it, with and without streaming, whatever
// the text holds; and its start and end writes each share the run's
// commit (two commits per stored response, as for store:false).
func TestStoredLongResponseExactAndJoined(t *testing.T) {
	h := stateServer(t)
	cs, ok := h.srv.store.(interface{ CommitStats() (int64, int64) })
	if !ok {
		t.Fatalf("%T reports no commits", h.srv.store)
	}
	input := `say <b>"bold"</b> & \\ back é ☃ ` + strings.Repeat("word ", 60)
	in, _ := json.Marshal(input)
	req := `{"model":"service","input":` + string(in) + `}`
	for _, stream := range []bool{false, true} {
		b := req
		if stream {
			b = strings.Replace(b, `"model"`, `"stream":true,"model"`, 1)
		}
		batches0, _ := cs.CommitStats()
		res := h.do("POST", "/v1/responses", b, "x-service-tenant-id", "t1")
		got := body(t, res)
		batches1, _ := cs.CommitStats()
		if res.StatusCode != 200 {
			t.Fatalf("stream %v: %d %s", stream, res.StatusCode, got)
		}
		if n := batches1 - batches0; n != 2 {
			t.Errorf("stream %v: a stored response took %d commits, want 2 (start and end, each with its history)", stream, n)
		}
		reply := got
		if stream {
			i := bytes.LastIndex(got, []byte("event: response.completed\ndata: "))
			if i < 0 {
				t.Fatalf("no response.completed in %s", got)
			}
			line := got[i+len("event: response.completed\ndata: "):]
			line = line[:bytes.IndexByte(line, '\n')]
			reply = []byte(gjson.GetBytes(line, "response").Raw)
		}
		if !strings.Contains(gjson.GetBytes(reply, "output_text").Str, strings.Join(strings.Fields(input), " ")) {
			t.Fatalf("stream %v: the answer does not hold the input: %s", stream, reply)
		}
		id := gjson.GetBytes(reply, "id").Str
		g := body(t, h.do("GET", "/v1/responses/"+id, "", "x-service-tenant-id", "t1"))
		if !bytes.Equal(g, reply) {
			t.Errorf("stream %v: GET returned\n%s\nnot the response as sent\n%s", stream, g, reply)
		}
		if r := h.run(runOf(id)); r.Status != runner.StatusCompleted {
			t.Errorf("run %+v", r)
		}
	}
}
