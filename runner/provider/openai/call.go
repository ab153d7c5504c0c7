package openai

import (
	"context"
	"io"
	"mime"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/propagation"

	"github.com/runedge/runedge/runner"
)

// The request's constant header values (call).
var (
	jsonValue        = []string{"application/json"}
	eventStreamValue = []string{"text/event-stream"}
	userAgentValue   = []string{"runedge"}
)

// traceContext writes W3C Trace Context headers.
var traceContext propagation.TraceContext

// call makes one attempt. Its request lives in a child of the run's
// context, so the run ending (client gone, cancel, run timeout) closes the
// upstream connection at once; the first-byte and idle watchdogs cancel
// the same context with a timeout failure as the cause.
func (p *Provider) call(ctx context.Context, body *upstreamBody, stream bool, emit func(runner.Event) error) (runner.Result, error) {
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	httpCtx := reqCtx
	if sent := runner.SentHook(ctx); sent != nil {
		// Once the request is written the run holds no copy of its body
		// but this one (body, kept for a retry), and the host's bytes in
		// flight need not count it while the model answers (runner.Sent).
		httpCtx = httptrace.WithClientTrace(reqCtx, &httptrace.ClientTrace{
			WroteRequest: func(w httptrace.WroteRequestInfo) {
				if w.Err == nil {
					sent()
				}
			},
		})
	}
	req, err := http.NewRequestWithContext(httpCtx, http.MethodPost, p.endpoint, body.sendReader())
	if err != nil {
		return runner.Result{}, providerFailure(false, "cannot build the request").saying("%v", err)
	}
	// As for a bytes.Reader: the length known, and the body read again
	// from its start when the transport retries on a fresh connection.
	req.ContentLength = int64(body.n)
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(body.sendReader()), nil }
	// The values are shared, allocated once: net/http never writes into
	// a header's values, Client.Do copies them, and Set or Add on this
	// request replaces or grows its own slice.
	h := req.Header
	h["Content-Type"] = jsonValue
	h["User-Agent"] = userAgentValue
	if stream {
		h["Accept"] = eventStreamValue
	} else {
		h["Accept"] = jsonValue
	}
	switch {
	case p.auth != nil:
		h["Authorization"] = p.auth
	case p.cfg.APIKey != "":
		h.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	// W3C traceparent/tracestate of the span the call runs in (the host's
	// provider span), so the upstream's trace joins the request's; without
	// a span in ctx (tracing off) nothing is added.
	traceContext.Inject(ctx, propagation.HeaderCarrier(h))

	// A stream must start within the first-byte limit; from its first
	// event on, the idle limit applies. A whole answer arrives only when it
	// is complete, so only the idle limit on its body (and the run's
	// limit) bound it.
	var wd *watchdog
	if stream {
		wd = newWatchdog(p.cfg.FirstByteTimeout, p.cfg.IdleTimeout, cancel)
		defer wd.stop()
	}
	res, err := p.client.Do(req)
	if err != nil {
		return runner.Result{}, p.transportFailure(reqCtx, err)
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return runner.Result{}, statusFailure(res, p.cfg.APIKey, time.Now())
	}
	if stream && isEventStream(res.Header.Get("Content-Type")) {
		return p.readStream(reqCtx, res.Body, wd, emit)
	}
	// A whole answer: asked for, or an upstream that ignores "stream".
	if wd == nil {
		wd = newWatchdog(p.cfg.IdleTimeout, p.cfg.IdleTimeout, cancel)
		defer wd.stop()
	}
	wd.kick()
	return p.readWhole(reqCtx, res.Body, res.ContentLength, wd, emit)
}

func isEventStream(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "text/event-stream"
}

// watchdog cancels a call whose upstream stays silent too long: until the
// first kick the first-byte limit applies, after it the idle limit, reset
// by every kick (every event of a stream, every read of a body). It
// measures silence, not the length of the answer.
type watchdog struct {
	t       *time.Timer
	idle    time.Duration
	started atomic.Bool
}

func newWatchdog(first, idle time.Duration, cancel context.CancelCauseFunc) *watchdog {
	w := &watchdog{idle: idle}
	w.t = time.AfterFunc(first, func() {
		if w.started.Load() {
			cancel(timeoutFailure("went quiet mid-answer: nothing for %s (idle timeout)", idle))
			return
		}
		cancel(timeoutFailure("no answer within %s (first-byte timeout)", first))
	})
	return w
}

func (w *watchdog) kick() {
	w.started.Store(true)
	w.t.Reset(w.idle)
}

func (w *watchdog) stop() { w.t.Stop() }
