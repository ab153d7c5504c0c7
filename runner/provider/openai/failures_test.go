package openai_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/provider/openai"
)

// wantFailure checks the sentinel, the message and the number of upstream
// requests.
func wantFailure(t *testing.T, err error, sentinel error, msg string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("err = %v, want %v", err, sentinel)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Fatalf("err %q does not say %q", err, msg)
	}
	wantNoKey(t, err)
}

func wantRequests(t *testing.T, u *upstream, n int) {
	t.Helper()
	if got := u.requests(); got != n {
		t.Fatalf("upstream got %d requests, want %d", got, n)
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more
	p := newProvider(t, "http://"+addr+"/v1", func(c *openai.Config) { c.MaxAttempts = 2 })
	_, _, err = generate(t, p, ask("hi", true))
	wantFailure(t, err, runner.ErrProvider, "openai upstream: refused the connection (after 2 attempts)")
	if strings.Contains(err.Error(), addr) {
		t.Fatalf("error quotes the upstream address: %v", err)
	}
}

func TestServerErrorsAreRetried(t *testing.T) {
	u := newUpstream(t, fails(500, "boom"))
	_, _, err := generate(t, u.provider(nil), ask("hi", true))
	wantFailure(t, err, runner.ErrProvider, "answered 500 Internal Server Error (after 3 attempts)")
	wantDetail(t, err, "boom")
	wantRequests(t, u, 3)

	u = newUpstream(t, fails(503, "busy"), streams("ok"))
	_, res, err := generate(t, u.provider(nil), ask("hi", true))
	if err != nil || res.Text != "ok" {
		t.Fatalf("retry after 503: %+v %v", res, err)
	}
	wantRequests(t, u, 2)

	u = newUpstream(t, fails(500, "boom"))
	_, _, err = generate(t, u.provider(func(c *openai.Config) { c.MaxAttempts = 1 }), ask("hi", false))
	wantFailure(t, err, runner.ErrProvider, "answered 500 Internal Server Error")
	wantDetail(t, err, "boom")
	wantRequests(t, u, 1)
}

func TestRateLimit(t *testing.T) {
	t.Run("long retry-after is passed on, not waited for", func(t *testing.T) {
		u := newUpstream(t, fails(429, "slow down", "Retry-After", "7"))
		_, _, err := generate(t, u.provider(nil), ask("hi", true))
		wantFailure(t, err, runner.ErrRateLimited, "answered 429 Too Many Requests")
		wantDetail(t, err, "slow down")
		if errors.Is(err, runner.ErrProvider) {
			t.Fatal("a 429 reads as a provider failure")
		}
		var ra interface{ RetryAfter() int }
		if !errors.As(err, &ra) || ra.RetryAfter() != 7 {
			t.Fatalf("retry-after lost: %v", err)
		}
		wantRequests(t, u, 1)
	})
	t.Run("short retry-after is waited for", func(t *testing.T) {
		u := newUpstream(t, fails(429, "slow down", "Retry-After-Ms", "2"), streams("ok"))
		_, res, err := generate(t, u.provider(nil), ask("hi", true))
		if err != nil || res.Text != "ok" {
			t.Fatalf("%+v %v", res, err)
		}
		wantRequests(t, u, 2)
	})
	t.Run("http date", func(t *testing.T) {
		when := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
		u := newUpstream(t, fails(429, "later", "Retry-After", when))
		_, _, err := generate(t, u.provider(nil), ask("hi", false))
		var ra interface{ RetryAfter() int }
		if !errors.As(err, &ra) || ra.RetryAfter() < 85 || ra.RetryAfter() > 91 {
			t.Fatalf("retry-after from a date: %v", err)
		}
	})
	t.Run("without retry-after, retries then gives up", func(t *testing.T) {
		u := newUpstream(t, fails(429, "nope"))
		_, _, err := generate(t, u.provider(nil), ask("hi", true))
		wantFailure(t, err, runner.ErrRateLimited, "(after 3 attempts)")
		var ra interface{ RetryAfter() int }
		if !errors.As(err, &ra) || ra.RetryAfter() != 0 {
			t.Fatalf("retry-after invented: %v", err)
		}
		wantRequests(t, u, 3)
	})
}

// hold blocks until the request is cancelled, and reports that it was.
func hold(cancelled chan<- struct{}) func(r *http.Request) {
	return func(r *http.Request) {
		select {
		case <-r.Context().Done():
			cancelled <- struct{}{}
		case <-time.After(20 * time.Second):
		}
	}
}

func TestSlowFirstByte(t *testing.T) {
	for _, c := range []struct {
		name    string
		headers bool // the headers come at once, the first event does not
	}{{"no headers", false}, {"headers but no event", true}} {
		t.Run(c.name, func(t *testing.T) {
			cancelled := make(chan struct{}, 1)
			u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				if c.headers {
					startSSE(w)
				}
				hold(cancelled)(r)
			})
			p := u.provider(func(c *openai.Config) { c.FirstByteTimeout = 100 * time.Millisecond })
			_, _, err := generate(t, p, ask("hi", true))
			wantFailure(t, err, runner.ErrTimeout, "no answer within 100ms (first-byte timeout)")
			wantRequests(t, u, 1) // a timeout already used its time: not retried
			select {
			case <-cancelled:
			case <-time.After(10 * time.Second):
				t.Fatal("the upstream request was not cancelled")
			}
		})
	}
}

func TestStallMidStream(t *testing.T) {
	cancelled := make(chan struct{}, 1)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, roleChunk, chunk("a"))
		hold(cancelled)(r)
	})
	p := u.provider(func(c *openai.Config) { c.IdleTimeout = 100 * time.Millisecond })
	deltas, _, err := generate(t, p, ask("hi", true))
	wantFailure(t, err, runner.ErrTimeout, "went quiet mid-answer: nothing for 100ms (idle timeout)")
	if !slices.Equal(deltas, []string{"a"}) {
		t.Fatalf("deltas %q", deltas)
	}
	wantRequests(t, u, 1)
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the stalled upstream request was not cancelled")
	}
}

// Keep-alive comments are not tokens: an upstream that sends only them for
// longer than the idle limit is stalled, even if it would answer later.
func TestKeepAlivesDoNotHoldOffIdle(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, chunk("a"))
		for range 20 {
			send(w, ": ping\n\n")
			time.Sleep(25 * time.Millisecond)
		}
		send(w, chunk("b"), finishChunk, doneEvent)
	})
	p := u.provider(func(c *openai.Config) { c.IdleTimeout = 150 * time.Millisecond })
	_, res, err := generate(t, p, ask("hi", true))
	if !errors.Is(err, runner.ErrTimeout) {
		t.Fatalf("result %+v err %v; 500ms of keep-alives passed for tokens", res, err)
	}
}

// A slow but steady stream outlives the idle timeout many times over.
func TestSteadyStreamIsNotIdle(t *testing.T) {
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		for range 12 {
			send(w, chunk("."))
			time.Sleep(60 * time.Millisecond)
		}
		send(w, finishChunk, doneEvent)
	})
	p := u.provider(func(c *openai.Config) { c.IdleTimeout = 400 * time.Millisecond })
	_, res, err := generate(t, p, ask("hi", true))
	if err != nil || res.Text != "............" {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestMalformedUpstream(t *testing.T) {
	cases := []struct {
		name   string
		stream bool
		script http.HandlerFunc
		msg    string
	}{
		{"broken event JSON", true, func(w http.ResponseWriter, r *http.Request) {
			startSSE(w)
			send(w, chunk("a"), "data: {\"choices\":[{\"delta\":\n\n")
		}, "sent a malformed stream event"},
		{"broken JSON before any delta", true, func(w http.ResponseWriter, r *http.Request) {
			startSSE(w)
			send(w, "data: not json\n\n")
		}, "sent a malformed stream event"},
		{"whole body not JSON", false, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "<html>gateway</html>")
		}, "answered with a body that is not JSON"},
		{"whole body without choices", false, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"object":"chat.completion","choices":[]}`)
		}, "answered without a choice"},
		{"error event mid-stream", true, func(w http.ResponseWriter, r *http.Request) {
			startSSE(w)
			send(w, chunk("a"), `data: {"error":{"message":"overloaded","type":"server_error"}}`+"\n\n")
		}, "reported an error mid-stream"},
		{"model refusal", false, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`)
		}, "the model refused: I can't help with that."},
		{"streamed refusal", true, func(w http.ResponseWriter, r *http.Request) {
			startSSE(w)
			send(w, `data: {"choices":[{"index":0,"delta":{"refusal":"No."}}]}`+"\n\n", finishChunk, doneEvent)
		}, "the model refused: No."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := newUpstream(t, c.script)
			_, _, err := generate(t, u.provider(nil), ask("hi", c.stream))
			wantFailure(t, err, runner.ErrProvider, c.msg)
			if c.name == "error event mid-stream" {
				wantDetail(t, err, "overloaded")
				return // an error event after a delta: not retried either
			}
			wantRequests(t, u, 1) // malformed answers are not retried
		})
	}
}

// drop sends events, then cuts the connection without ending the body.
func drop(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, events...)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
}

func TestConnectionDrops(t *testing.T) {
	t.Run("after a delta: not retried", func(t *testing.T) {
		u := newUpstream(t, drop(roleChunk, chunk("a")), streams("never"))
		deltas, _, err := generate(t, u.provider(nil), ask("hi", true))
		wantFailure(t, err, runner.ErrProvider, "the stream broke mid-answer")
		if !slices.Equal(deltas, []string{"a"}) {
			t.Fatalf("deltas %q", deltas)
		}
		wantRequests(t, u, 1)
	})
	t.Run("before any delta: retried", func(t *testing.T) {
		u := newUpstream(t, drop(roleChunk), streams("b"))
		deltas, res, err := generate(t, u.provider(nil), ask("hi", true))
		if err != nil || res.Text != "b" || !slices.Equal(deltas, []string{"b"}) {
			t.Fatalf("%+v %q %v", res, deltas, err)
		}
		wantRequests(t, u, 2)
	})
	t.Run("clean end before the answer", func(t *testing.T) {
		u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			startSSE(w)
			send(w, chunk("a"))
		})
		_, _, err := generate(t, u.provider(nil), ask("hi", true))
		wantFailure(t, err, runner.ErrProvider, "the stream ended before the answer was complete")
	})
}

func TestKeyIsNeverQuoted(t *testing.T) {
	t.Run("401", func(t *testing.T) {
		u := newUpstream(t, fails(401, "Incorrect API key provided: sk-test-secret-key-123456."))
		_, _, err := generate(t, u.provider(nil), ask("hi", true))
		wantFailure(t, err, runner.ErrProvider, "refused the API key (401 Unauthorized)")
		wantRequests(t, u, 1)
	})
	t.Run("401 without a key", func(t *testing.T) {
		u := newUpstream(t, fails(401, "You didn't provide an API key."))
		_, _, err := generate(t, u.provider(func(c *openai.Config) { c.APIKey = "" }), ask("hi", true))
		wantFailure(t, err, runner.ErrProvider, "refused the request (401 Unauthorized): no API key is configured")
	})
	t.Run("echoed in a 400", func(t *testing.T) {
		u := newUpstream(t, fails(400, "bad header Bearer sk-test-secret-key-123456 and sk-abc***wxyz"))
		_, _, err := generate(t, u.provider(nil), ask("hi", true))
		wantFailure(t, err, runner.ErrProvider, "rejected the request (400 Bad Request)")
		wantDetail(t, err, "bad header Bearer [redacted] and [redacted]")
	})
	t.Run("a key that is not sk- shaped", func(t *testing.T) {
		u := newUpstream(t, fails(404, "no model for token plainkey42"))
		p := u.provider(func(c *openai.Config) { c.APIKey = "plainkey42" })
		_, _, err := generate(t, p, ask("hi", false))
		wantFailure(t, err, runner.ErrProvider, "rejected the request (404 Not Found)")
		wantDetail(t, err, "no model for token [redacted]")
	})
}

func TestErrorBodyShapes(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"error":"model 'llama9' not found"}`, "model 'llama9' not found"},                                 // Ollama
		{`{"object":"error","message":"The model does not exist.","code":404}`, "The model does not exist."}, // vLLM
		{`{"detail":"no such route"}`, "no such route"},
		{"plain text\nsecond line", "plain text"},
	} {
		u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(404)
			io.WriteString(w, c.body)
		})
		_, _, err := generate(t, u.provider(nil), ask("hi", false))
		wantFailure(t, err, runner.ErrProvider, "(404 Not Found)")
		wantDetail(t, err, c.want)
		if strings.Contains(detail(err), "second line") {
			t.Fatalf("quoted more than the first line: %v", err)
		}
	}
}

func TestCancelReachesTheUpstream(t *testing.T) {
	cancelled := make(chan struct{}, 1)
	u := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		startSSE(w)
		send(w, chunk("a"))
		hold(cancelled)(r)
	})
	// Limits far beyond the wait below: only the cancel can end the call.
	p := u.provider(func(c *openai.Config) { c.FirstByteTimeout, c.IdleTimeout = time.Minute, time.Minute })
	ctx, cancel := context.WithCancel(t.Context())
	_, err := p.Generate(ctx, ask("hi", true), func(runner.Event) error {
		cancel() // the client goes away after the first delta
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream never saw the request end")
	}
	wantRequests(t, u, 1)
}

func TestEmitErrorStops(t *testing.T) {
	gone := errors.New("consumer gone")
	u := newUpstream(t, streams("a", "b", "c"))
	n := 0
	_, err := u.provider(nil).Generate(t.Context(), ask("hi", true), func(runner.Event) error {
		n++
		return gone
	})
	if !errors.Is(err, gone) || n != 1 {
		t.Fatalf("err %v after %d emits", err, n)
	}
	wantRequests(t, u, 1)
}
