package telemetry

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/host/internal/httpmux"
)

// A handler that panics on some input panics on every request that sends
// it: a stack trace each time (11 KB) would let a client fill the log. So
// the first panic at a site (the function that panicked) is logged with its
// stack, and later ones there are counted: a line with the count, without a
// stack, at most once per PanicLogInterval per site, written when a panic
// there finds the interval past. Sites are told apart by their function's
// name; past maxPanicSites distinct sites the rest share one entry.
const (
	// PanicLogInterval is the least time between two lines about one
	// panic site after its first.
	PanicLogInterval = time.Minute
	maxPanicSites    = 64
)

// panicLog remembers, per site, what has been logged.
type panicLog struct {
	mu    sync.Mutex
	sites map[string]*panicSite
	now   func() time.Time
}

type panicSite struct {
	total   int64     // panics at the site since the process started
	unseen  int64     // panics since the last line about the site
	written time.Time // when the last line was written
}

// panics is the process's panic log: handlers are wrapped once per server,
// but a panic site is a site of the binary, whichever server met it.
var panics = newPanicLog(time.Now)

func newPanicLog(now func() time.Time) *panicLog {
	return &panicLog{sites: make(map[string]*panicSite), now: now}
}

// note logs one recovered panic p as the rule above says. It must be called
// from the deferred function that recovered p, so the stack is still the
// panicking one.
func (l *panicLog) note(log *slog.Logger, r *http.Request, p any) {
	site := panicSiteOf()
	now := l.now()
	l.mu.Lock()
	s := l.sites[site]
	if s == nil {
		if len(l.sites) >= maxPanicSites {
			site = "other"
			s = l.sites[site]
		}
		if s == nil {
			s = &panicSite{}
			l.sites[site] = s
		}
	}
	s.total++
	s.unseen++
	first := s.total == 1
	due := first || now.Sub(s.written) >= PanicLogInterval
	var count, total int64
	if due {
		count, total, s.unseen, s.written = s.unseen, s.total, 0, now
	}
	l.mu.Unlock()
	switch {
	case first:
		log.Error("handler panicked; later panics at this site are counted, not traced",
			"site", site, "panic", fmt.Sprint(p), "method", r.Method, "path", r.URL.Path,
			"stack", string(debug.Stack()))
	case due:
		log.Error("handler panicked again", "site", site, "panic", fmt.Sprint(p),
			"count", count, "since", PanicLogInterval.String(), "total", total)
	}
}

// panicSiteOf names the function that panicked: the first frame after the
// runtime's panic machinery that is not in the runtime (a nil dereference
// passes through runtime.sigpanic and runtime.panicmem).
func panicSiteOf() string {
	pc := make([]uintptr, 32)
	n := runtime.Callers(3, pc)
	frames := runtime.CallersFrames(pc[:n])
	inPanic := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			inPanic = true
		case inPanic && !strings.HasPrefix(f.Function, "runtime."):
			return f.Function
		}
		if !more {
			return "unknown"
		}
	}
}

// recovered ends a request whose handler panicked with p: the panic is
// noted, and when nothing was written yet the client gets 500
// internal_error in the OpenAI shape. When the reply had begun there is
// nothing to send but its end: abort reports whether the caller must end
// the connection (re-panicking http.ErrAbortHandler, which net/http turns
// into a closed connection without a trace of its own).
func recovered(log *slog.Logger, rec *Recorder, r *http.Request, p any) (abort bool) {
	if p == http.ErrAbortHandler { // a deliberate abort, not a failure
		return true
	}
	panics.note(log, r, p)
	if rec.Status != 0 {
		return true
	}
	e := apierr.From(fmt.Errorf("handler panicked: %v", p))
	e.Message = "internal error"
	httpmux.WriteError(rec, e)
	return false
}
