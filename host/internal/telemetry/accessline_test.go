package telemetry

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/filters"
)

// accessCase is one access line's values.
type accessCase struct {
	method, path, endpoint, runID, tenant string
	status                                int
	d                                     time.Duration
	bytes                                 int64
	stream                                bool
	at                                    time.Time
}

// oddStrings are values slog quotes or escapes one way or another.
var oddStrings = []string{
	"", "plain", "/v1/chat/completions", "with space", "a=b", `q"uote`, `back\slash`, "tab\there",
	"new\nline", "cr\rhere", "nul\x00byte", "del\x7f", "bell\x07", "<html>&amp;", "é ü 字", "emoji 🙂",
	"\u2028line\u2029para", "nb\u00a0space", "\u200bzero-width", "bad\xffutf8", "\xc3", "ok-_.~:/%41",
	"\u0085next-line", "\ufeffbom", "trailing\\",
}

// logBoth writes c's access line through AccessLog into a LogOutput's own
// handler (the hand-written line) and into slog's handler of the same
// format, and returns both.
func logBoth(t *testing.T, jsonFormat bool, c accessCase) (hand, viaSlog string) {
	t.Helper()
	var out, ref bytes.Buffer
	o := NewLogOutput(&out, time.Hour, AccessBufferBytes)
	h, sh := o.TextHandler(), slog.Handler(slog.NewTextHandler(&ref, nil))
	if jsonFormat {
		h, sh = o.JSONHandler(), slog.NewJSONHandler(&ref, nil)
	}
	r := httptest.NewRequest("POST", "/", nil)
	r.Method, r.URL.Path = c.method, c.path
	rw := httptest.NewRecorder()
	if c.runID != "" {
		rw.Header().Set(filters.HeaderRunID, c.runID)
	}
	rec := &Recorder{ResponseWriter: rw, Status: c.status, Bytes: c.bytes, Tenant: c.tenant, Stream: c.stream}
	AccessLog(slog.New(h), r, rec, c.endpoint, c.at, c.d)
	AccessLog(slog.New(sh), r, rec, c.endpoint, c.at, c.d)
	o.Close()
	return out.String(), ref.String()
}

// The hand-written access line is slog's, byte for byte, in both formats,
// for values slog quotes or escapes, odd durations, times in other zones
// and random bytes; what it leaves to slog (a year past 9999, a float
// encoding/json writes with an exponent) is slog's by construction.
func TestAccessLineIsSlogs(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("", -(3*3600 + 30*60)), time.FixedZone("X", 5*3600+45*60), time.Local}
	base := time.Date(2026, 11, 29, 22, 23, 35, 123456789, time.UTC)
	var cases []accessCase
	for i, s := range oddStrings {
		for j, other := range []string{"POST", s} {
			cases = append(cases, accessCase{
				method: other, path: s, endpoint: s, runID: s, tenant: s, status: 200 + i, stream: j == 1,
				d: time.Duration(i*1_234_567 + j), bytes: int64(i * 1000), at: base.In(zones[(i+j)%len(zones)]),
			})
		}
	}
	for _, d := range []time.Duration{0, time.Microsecond, time.Millisecond, 999 * time.Microsecond, 1500 * time.Microsecond,
		17 * time.Minute, 1000 * time.Second, 1001 * time.Second, 400 * time.Hour, 1<<63 - 1} {
		cases = append(cases, accessCase{method: "GET", path: "/v1/models", endpoint: "models", status: 401, d: d, at: base})
	}
	for _, at := range []time.Time{
		{}, time.Unix(0, 0), base.Truncate(time.Second), base.Add(999_999 * time.Nanosecond), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Now(),
	} {
		cases = append(cases, accessCase{method: "POST", path: "/v1/responses", endpoint: "responses", status: 200, d: time.Millisecond, at: at})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	randomString := func() string {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				b[i] &= 0x7f
			}
		}
		return string(b)
	}
	for range 2000 {
		cases = append(cases, accessCase{
			method: randomString(), path: randomString(), endpoint: randomString(), runID: randomString(), tenant: randomString(),
			status: rng.IntN(600), d: time.Duration(rng.Int64N(int64(time.Hour))), bytes: rng.Int64(), stream: rng.IntN(2) == 0,
			at: base.Add(time.Duration(rng.Int64N(int64(1000 * time.Hour)))).In(zones[rng.IntN(len(zones))]),
		})
	}
	for _, jsonFormat := range []bool{false, true} {
		for i, c := range cases {
			hand, viaSlog := logBoth(t, jsonFormat, c)
			if hand != viaSlog || strings.Count(hand, "\n") != 1 {
				t.Fatalf("json %v, case %d %+v:\nhand %q\nslog %q", jsonFormat, i, c, hand, viaSlog)
			}
		}
	}
}

// A LogOutput's handler with attributes or a group added writes its
// access lines through slog, attributes and group included.
func TestAccessLineWithAttrsGoesThroughSlog(t *testing.T) {
	for _, jsonFormat := range []bool{false, true} {
		for _, added := range []string{"attrs", "group"} {
			var out bytes.Buffer
			o := NewLogOutput(&out, time.Hour, AccessBufferBytes)
			h := o.TextHandler()
			if jsonFormat {
				h = o.JSONHandler()
			}
			want := " host=h1 method=POST path=/v1/chat/completions "
			log := slog.New(h).With("host", "h1")
			if added == "group" {
				want = " g.method=POST g.path=/v1/chat/completions "
				log = slog.New(h).WithGroup("g")
			}
			if jsonFormat {
				want = `,"host":"h1","method":"POST","path":"/v1/chat/completions",`
				if added == "group" {
					want = `,"g":{"method":"POST","path":"/v1/chat/completions",`
				}
			}
			r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
			AccessLog(log, r, &Recorder{ResponseWriter: httptest.NewRecorder(), Status: 200}, "chat", time.Now(), time.Millisecond)
			o.Close()
			if line := out.String(); !strings.Contains(line, want) {
				t.Fatalf("json %v, %s added: %q, want it to hold %q", jsonFormat, added, line, want)
			}
		}
	}
}

func ExampleLogOutput_TextHandler() {
	var out bytes.Buffer
	o := NewLogOutput(&out, time.Hour, AccessBufferBytes)
	r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
	at := time.Date(2026, 11, 29, 22, 23, 35, 123456789, time.UTC)
	AccessLog(slog.New(o.TextHandler()), r, &Recorder{ResponseWriter: httptest.NewRecorder(), Status: 200, Bytes: 640, Tenant: "default"},
		"chat.completions", at, 1234*time.Microsecond)
	o.Close()
	fmt.Print(out.String())
	// Output:
	// time=2026-11-29T22:23:35.123Z level=INFO msg=request method=POST path=/v1/chat/completions endpoint=chat.completions status=200 duration_ms=1.234 run_id="" tenant=default bytes=640 stream=false
}
