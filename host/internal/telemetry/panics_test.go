package telemetry

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/internal/logbuf"
)

// lines are the JSON log lines in logs whose msg is msg.
func lines(t *testing.T, logs *logbuf.Buffer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not a JSON line: %s", sc.Text())
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// counted is runedge_http_requests_total for a POST to endpoint answered
// status.
func counted(t *testing.T, m *Metrics, endpoint, status string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "runedge_http_requests_total" {
			continue
		}
	metrics:
		for _, x := range mf.GetMetric() {
			for _, l := range x.GetLabel() {
				want := map[string]string{"endpoint": endpoint, "method": "POST", "status": status}[l.GetName()]
				if want != "" && l.GetValue() != want {
					continue metrics
				}
			}
			return x.GetCounter().GetValue()
		}
	}
	return 0
}

// dereference panics as a nil *big.Rat did in the schema library.
func dereference(p *struct{ n int }) int { return p.n }

// TestHandlerPanicIsRecorded: over real HTTP, a request whose handler
// panics gets 500 internal_error in the OpenAI shape, one access line and
// one request metric, each time; the panic is logged with its stack once,
// not once per request. A panic after the reply began closes the
// connection and is recorded with the status that was sent. Before, the
// wrapper was unwound: no access line, no metric, the connection reset and
// a stack trace logged per request by net/http.
func TestHandlerPanicIsRecorded(t *testing.T) {
	logs := &logbuf.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	m := NewMetrics(false)
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-set-before", "yes")
		_ = dereference(nil)
	})
	mux.HandleFunc("/v1/responses", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {}\n\n")
		http.NewResponseController(w).Flush()
		panic("mid-stream")
	})
	srv := httptest.NewServer(Observe(mux, m, nil, log))
	defer srv.Close()

	const n = 3
	for range n {
		res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 500 || res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("status %d, type %q, want 500 JSON: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
		}
		for k, want := range map[string]string{"error.type": "server_error", "error.code": "internal_error", "error.message": "internal error"} {
			if got := gjson.GetBytes(b, k).Str; got != want {
				t.Errorf("%s = %q, want %q: %s", k, got, want, b)
			}
		}
		if !gjson.GetBytes(b, "error.param").Exists() {
			t.Errorf("error.param missing: %s", b)
		}
	}
	res, err := http.Post(srv.URL+"/v1/responses", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(res.Body); err == nil {
		t.Errorf("a stream whose handler panicked ended cleanly; want the connection closed")
	}
	res.Body.Close()
	srv.Close() // every handler has returned

	access := lines(t, logs, "request")
	if len(access) != n+1 {
		t.Fatalf("%d access lines, want %d:\n%s", len(access), n+1, logs.String())
	}
	for i, l := range access[:n] {
		if l["status"] != 500.0 || l["endpoint"] != "chat.completions" {
			t.Errorf("access line %d: %v", i, l)
		}
	}
	if l := access[n]; l["status"] != 200.0 || l["endpoint"] != "responses" {
		t.Errorf("stream's access line: %v", l)
	}
	if c := counted(t, m, "chat.completions", "500"); c != n {
		t.Errorf("%v requests counted 500, want %d", c, n)
	}
	if c := counted(t, m, "responses", "200"); c != 1 {
		t.Errorf("%v streams counted, want 1", c)
	}
	first := lines(t, logs, "handler panicked; later panics at this site are counted, not traced")
	if len(first) != 2 { // one per site
		t.Fatalf("%d panic lines with a stack, want 2 (one per site):\n%s", len(first), logs.String())
	}
	if site := first[0]["site"]; site != "github.com/runedge/runedge/host/internal/telemetry.dereference" {
		t.Errorf("site %v, want the function that dereferenced nil", site)
	}
	if stack, _ := first[0]["stack"].(string); !strings.Contains(stack, "dereference") {
		t.Errorf("the first panic's stack does not show where: %q", stack)
	}
	if again := lines(t, logs, "handler panicked again"); len(again) != 0 {
		t.Errorf("%d repeat lines within the interval, want 0", len(again))
	}
}

// TestRepeatedPanicsAreCounted: after the first panic at a site, later ones
// there are one line with their count per PanicLogInterval, without a
// stack.
func TestRepeatedPanicsAreCounted(t *testing.T) {
	logs := &logbuf.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	now := time.Unix(1_000_000, 0)
	l := newPanicLog(func() time.Time { return now })
	r := httptest.NewRequest("POST", "/v1/responses", nil)
	panicAt := func() {
		defer func() { l.note(log, r, recover()) }()
		_ = dereference(nil)
	}
	for range 5 {
		panicAt()
	}
	now = now.Add(PanicLogInterval)
	panicAt()
	panicAt()
	if got := len(lines(t, logs, "handler panicked; later panics at this site are counted, not traced")); got != 1 {
		t.Fatalf("%d first lines, want 1:\n%s", got, logs.String())
	}
	again := lines(t, logs, "handler panicked again")
	if len(again) != 1 {
		t.Fatalf("%d repeat lines, want 1:\n%s", len(again), logs.String())
	}
	if a := again[0]; a["count"] != 5.0 || a["total"] != 6.0 || a["stack"] != nil {
		t.Errorf("repeat line %v, want count 5, total 6 and no stack", a)
	}
}
