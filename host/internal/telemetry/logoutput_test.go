package telemetry

import (
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/internal/logbuf"
)

// syncBuffer is standard error as a test reads it (logbuf.Buffer: safe
// against the flush timer's goroutine), its writes counted.
type syncBuffer struct {
	logbuf.Buffer
	writes atomic.Int32
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.writes.Add(1)
	return s.Buffer.Write(p)
}

func (s *syncBuffer) Writes() int { return int(s.writes.Load()) }

func textLogger(o *LogOutput) *slog.Logger {
	return slog.New(o.Handler(func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) }))
}

// accessLine logs one access line the way the server does.
func accessLine(log *slog.Logger, path string) {
	r := httptest.NewRequest("POST", path, nil)
	AccessLog(log, r, &Recorder{ResponseWriter: httptest.NewRecorder(), Status: 200}, "chat", time.Now(), time.Millisecond)
}

func TestAccessLinesWaitForTheInterval(t *testing.T) {
	var out syncBuffer
	o := NewLogOutput(&out, 200*time.Millisecond, AccessBufferBytes)
	defer o.Close()
	log := textLogger(o)
	accessLine(log, "/v1/a")
	accessLine(log, "/v1/b")
	if got := out.String(); got != "" {
		t.Fatalf("access lines written before the interval: %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "path=/v1/b") {
		if time.Now().After(deadline) {
			t.Fatalf("access lines not written after the interval: %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := out.Writes(); n != 1 {
		t.Errorf("two buffered lines took %d writes, want 1", n)
	}
	if !strings.Contains(out.String(), "msg=request") || strings.Index(out.String(), "/v1/a") > strings.Index(out.String(), "/v1/b") {
		t.Errorf("lines out of order or not access lines: %q", out.String())
	}
}

func TestDirectLineWritesTheAccessLinesBeforeIt(t *testing.T) {
	var out syncBuffer
	o := NewLogOutput(&out, time.Hour, AccessBufferBytes)
	defer o.Close()
	log := textLogger(o)
	accessLine(log, "/v1/first")
	log.Warn("then a warning")
	got := out.String()
	first, warn := strings.Index(got, "/v1/first"), strings.Index(got, "then a warning")
	if first < 0 || warn < 0 || first > warn {
		t.Fatalf("want the access line, then the warning, at once; got %q", got)
	}
}

func TestFullBufferIsWritten(t *testing.T) {
	var out syncBuffer
	o := NewLogOutput(&out, time.Hour, 1024)
	defer o.Close()
	log := textLogger(o)
	for i := range 20 {
		accessLine(log, fmt.Sprintf("/v1/%d", i))
	}
	if out.Writes() == 0 {
		t.Fatal("20 access lines over a 1 KiB buffer and nothing written")
	}
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if !strings.HasPrefix(l, "time=") || !strings.HasSuffix(l, "stream=false") {
			t.Fatalf("torn line %q", l)
		}
	}
}

func TestCloseWritesAndStopsBuffering(t *testing.T) {
	var out syncBuffer
	o := NewLogOutput(&out, time.Hour, AccessBufferBytes)
	log := textLogger(o)
	accessLine(log, "/v1/before")
	o.Close()
	if !strings.Contains(out.String(), "/v1/before") {
		t.Fatalf("Close left an access line in the buffer: %q", out.String())
	}
	accessLine(log, "/v1/after")
	if !strings.Contains(out.String(), "/v1/after") {
		t.Fatalf("an access line after Close waited: %q", out.String())
	}
}

// Concurrent access and other lines: every line whole, none lost.
func TestConcurrentLinesAreWhole(t *testing.T) {
	var out syncBuffer
	o := NewLogOutput(&out, 5*time.Millisecond, 2048)
	log := textLogger(o)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if i%10 == 0 {
					log.Info("other", "g", g, "i", i)
				} else {
					accessLine(log, fmt.Sprintf("/v1/%d/%d", g, i))
				}
			}
		})
	}
	wg.Wait()
	o.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*200 {
		t.Fatalf("%d lines, want %d", len(lines), 8*200)
	}
	for _, l := range lines {
		whole := strings.HasPrefix(l, "time=") && (strings.HasSuffix(l, "stream=false") || strings.Contains(l, "msg=other"))
		if !whole || strings.Count(l, "time=") != 1 {
			t.Fatalf("torn line %q", l)
		}
	}
}

// BenchmarkAccessLog is one access line into a file, as standard error
// redirected to one: written at once (the line per write(2) of before),
// through LogOutput's buffer by slog's handler, and appended by hand
// (LogOutput.TextHandler, JSONHandler: what runedge serve uses).
func BenchmarkAccessLog(b *testing.B) {
	r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
	rec := &Recorder{ResponseWriter: httptest.NewRecorder(), Status: 200}
	for _, mode := range []string{"direct", "buffered", "hand-text", "hand-json"} {
		b.Run(mode, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "stderr"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			log := slog.New(slog.NewTextHandler(f, nil))
			if mode != "direct" {
				o := NewLogOutput(f, AccessFlushInterval, AccessBufferBytes)
				defer o.Close()
				switch mode {
				case "buffered":
					log = textLogger(o)
				case "hand-text":
					log = slog.New(o.TextHandler())
				case "hand-json":
					log = slog.New(o.JSONHandler())
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				AccessLog(log, r, rec, "chat", time.Now(), time.Millisecond)
			}
		})
	}
}
