// Package openai is a provider for any OpenAI-compatible chat completions
// upstream: OpenAI itself, vLLM, llama.cpp server, Ollama, LM Studio, or
// another runedge. It speaks plain HTTP and server-sent events with
// net/http, so a stream costs no SDK machinery per token, and it owns the
// things an edge must get right in front of a remote model: deltas passed
// on as they arrive, failures told apart (refused, rate limited, timed
// out, broken), retries only while nothing has reached the client, and an
// upstream request that dies with the run. See README.md.
package openai

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/runedge/runedge/runner"
)

// Provider calls one upstream model. It is safe for concurrent use.
type Provider struct {
	cfg      Config
	endpoint string // BaseURL + /chat/completions
	client   *http.Client
	auth     []string // the Authorization header's value, nil without an API key
	// dials counts the upstream connections opened since the last Release.
	dials atomic.Int64
}

// keepDials is how many connections a host may have opened since the
// last Release and still keep its idle ones: a host whose few
// connections serve a trickle keeps them warm, one that a burst made
// open more lets them go once quiet.
const keepDials = 4

var _ runner.PreparingProvider = (*Provider)(nil)

// New returns a provider for cfg, or an error naming what is wrong with it.
func New(cfg Config) (*Provider, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("openai provider: %w", err)
	}
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	p := &Provider{cfg: cfg, endpoint: cfg.BaseURL + "/chat/completions"}
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			p.dials.Add(1)
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return copyConn{c}, nil
		},
		TLSHandshakeTimeout: cfg.ConnectTimeout,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		// Named, not left to net/http's default of the same size: a small
		// body goes with its request's head in one write only while both
		// fit it (oneWriteBody).
		WriteBufferSize: writeBufferSize,
		// A compressed event stream may be held back by the upstream's
		// compressor until a block fills; answers are small anyway.
		DisableCompression: true,
	}
	// No Client.Timeout: the run's context, the first-byte and idle
	// watchdogs bound every call, and a wall-clock limit would cut long
	// healthy streams.
	p.client = &http.Client{Transport: tr}
	if cfg.APIKey != "" {
		p.auth = []string{"Bearer " + cfg.APIKey}
	}
	return p, nil
}

// Name is "openai".
func (p *Provider) Name() string { return "openai" }

// TakesPendingTexts implements runner.PendingTextProvider: the upstream
// body copies a pending text's literal (plainParts) or decodes it first
// (marshaledBody), and EstimateInputTokens counts TextLen.
func (p *Provider) TakesPendingTexts() bool { return true }

// Close releases idle upstream connections.
func (p *Provider) Close() { p.client.CloseIdleConnections() }

// Release closes the idle upstream connections when more than keepDials
// were opened since the last Release, and reports whether it did. The
// host calls it once it has fallen quiet (host/internal/heaptrim): the
// transport keeps up to 64 idle connections per upstream for 90 s, each
// with two goroutines, their stacks and its buffers, which a burst leaves
// behind and the next burst's heap grows on top of. The next request
// after a release dials again (for a remote model, a TLS handshake); a
// host serving a trickle over a few connections keeps them.
func (p *Provider) Release() bool {
	if p.dials.Swap(0) <= keepDials {
		return false
	}
	p.client.CloseIdleConnections()
	return true
}

// Generate asks the upstream for the answer: streamed when the client
// streams (deltas passed to emit as each event arrives), whole otherwise.
//
// A failed call is tried again (up to MaxAttempts, with backoff) only when
// retrying can help — the connection failed, the upstream answered 408,
// 429 or 5xx, or the stream broke — and only while nothing has been passed
// to emit: once a delta has gone on, a retry would repeat or contradict it.
func (p *Provider) Generate(ctx context.Context, req runner.ProviderRequest, emit func(runner.Event) error) (runner.Result, error) {
	body, err := p.upstreamBody(req)
	if err != nil {
		return runner.Result{}, fmt.Errorf("%w: openai upstream: cannot encode the request: %v", runner.ErrProvider, err)
	}
	// req is not used past this point: the messages it holds are in body
	// (copied, or the client's literals that the run holds anyway), and a
	// long call keeps one copy of them, not two.
	return p.generate(ctx, body, req.Stream, emit)
}

// Prepare implements runner.PreparingProvider: the upstream request is
// written now, and the run that sends it holds it alone (the client's
// literals it points at, not the messages they were decoded into). A
// request that cannot be written is left to Generate, which reports it.
func (p *Provider) Prepare(req runner.ProviderRequest) (runner.PreparedRun, bool) {
	body, err := p.upstreamBody(req)
	if err != nil {
		return nil, false
	}
	stream := req.Stream
	return func(ctx context.Context, emit func(runner.Event) error) (runner.Result, error) {
		return p.generate(ctx, body, stream, emit)
	}, true
}

// generate sends body, again while an attempt fails in a way another may
// not (and nothing has been emitted).
func (p *Provider) generate(ctx context.Context, body *upstreamBody, stream bool, emit func(runner.Event) error) (runner.Result, error) {
	emitted := false
	tracked := func(ev runner.Event) error {
		emitted = true
		return emit(ev)
	}
	for attempt := 1; ; attempt++ {
		res, err := p.call(ctx, body, stream, tracked)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return runner.Result{}, context.Cause(ctx)
		}
		f := asFailure(err)
		if emitted || !f.retry || attempt >= p.cfg.MaxAttempts || f.after > p.cfg.BackoffMax {
			return runner.Result{}, f.final(attempt)
		}
		if err := sleep(ctx, backoff(p.cfg.BackoffBase, p.cfg.BackoffMax, attempt, f.after)); err != nil {
			return runner.Result{}, err
		}
	}
}
