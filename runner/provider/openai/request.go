package openai

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/runedge/runedge/internal/jsonfast"
	"github.com/runedge/runedge/runner"
)

// wireRequest is the chat completions request body. Only what the native
// request says is sent, so any compatible server accepts it.
type wireRequest struct {
	Model             string          `json:"model"`
	Messages          []wireMessage   `json:"messages"`
	Stream            bool            `json:"stream"`
	StreamOptions     *streamOptions  `json:"stream_options,omitempty"`
	MaxTokens         int             `json:"max_tokens,omitempty"`
	ResponseFormat    *responseFormat `json:"response_format,omitempty"`
	Tools             []wireTool      `json:"tools,omitempty"`
	ToolChoice        any             `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
	// The client's settings for the upstream (runner.Upstream), under
	// their chat completions names; absent when not given.
	ReasoningEffort  string `json:"reasoning_effort,omitempty"`
	PromptCacheKey   string `json:"prompt_cache_key,omitempty"`
	SafetyIdentifier string `json:"safety_identifier,omitempty"`
	ServiceTier      string `json:"service_tier,omitempty"`
	User             string `json:"user,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type responseFormat struct {
	Type       string      `json:"type"` // json_schema | json_object
	JSONSchema *jsonSchema `json:"json_schema,omitempty"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
}

// body encodes req for the upstream, in one array.
func (p *Provider) body(req runner.ProviderRequest) ([]byte, error) {
	b, err := p.upstreamBody(req)
	if err != nil {
		return nil, err
	}
	return b.bytes(), nil
}

// upstreamBody encodes req for the upstream. It is built once per
// Generate and read again by each retry.
func (p *Provider) upstreamBody(req runner.ProviderRequest) (*upstreamBody, error) {
	if b, ok := p.plainParts(req); ok {
		return b, nil
	}
	b, err := p.marshaledBody(req)
	if err != nil {
		return nil, err
	}
	return wholeBody(b), nil
}

// marshaledBody is json.Marshal of req's wireRequest.
func (p *Provider) marshaledBody(req runner.ProviderRequest) ([]byte, error) {
	u := req.Upstream
	// encoding/json writes Content as it is: pending texts are decoded
	// first (in place: the same texts).
	runner.DecodeTexts(req.Messages)
	w := wireRequest{Model: p.cfg.Model, Messages: wireMessages(req.Messages), Stream: req.Stream,
		MaxTokens: req.MaxOutputTokens, Tools: wireTools(req.Tools), ReasoningEffort: u.ReasoningEffort,
		PromptCacheKey: u.PromptCacheKey, SafetyIdentifier: u.SafetyIdentifier, ServiceTier: u.ServiceTier, User: u.User}
	if len(w.Tools) > 0 {
		// Without tools, tool_choice and parallel_tool_calls are refused
		// by OpenAI; with them, what the client chose is passed on.
		w.ToolChoice, w.ParallelToolCalls = wireToolChoice(req.ToolChoice), req.ParallelToolCalls
	}
	if req.Stream && p.cfg.IncludeUsage {
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	switch {
	case len(req.OutputSchema) > 0:
		w.ResponseFormat = &responseFormat{Type: "json_schema",
			JSONSchema: &jsonSchema{Name: schemaName(req.SchemaName), Schema: req.OutputSchema}}
	case req.JSONObject:
		w.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	return json.Marshal(w)
}

// schemaName fits a client's schema name to OpenAI's rule (1-64 of
// a-z A-Z 0-9 _ -), which stricter upstreams enforce with a 400.
func schemaName(name string) string {
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, name)
	if len(clean) > 64 {
		clean = clean[:64]
	}
	if clean == "" {
		return "output"
	}
	return clean
}

// plainParts writes the body of a request without tools, schema or tool
// messages (nearly every request) as json.Marshal writes wireRequest,
// without its reflection (about 6 µs a request); ok is false for the
// rest. Two differences, neither one a reader sees: < > & are not escaped
// (jsonfast.AppendStringPlain), and a text that came as a JSON string a
// writer may copy (runner.Message.ContentJSON: the client's history, as
// the mapping passed it) goes as it came, not escaped again: for an
// agent's 229 KB history, escaping was the body's whole cost
// (RATIONALE.md, "Agent-sized bodies"). Such a text is not copied either:
// the body points at it (upstreamBody). TestPlainBodyMatchesMarshal holds
// the two together: the same bytes as json.Marshal without HTML escaping
// where no text has a literal, the same JSON value where one has.
func (p *Provider) plainParts(req runner.ProviderRequest) (_ *upstreamBody, ok bool) {
	if len(req.Tools) > 0 || len(req.OutputSchema) > 0 || req.JSONObject {
		return nil, false
	}
	n := 64 + len(p.cfg.Model)
	lits := 0
	for i := range req.Messages {
		m := &req.Messages[i]
		if len(m.ToolCalls) > 0 || m.ToolCallID != "" || len(m.Parts) > 0 || m.Role == runner.RoleReasoning {
			return nil, false
		}
		if _, ok := m.ContentJSON(); ok {
			// `,{"role":"…","content":` and `}` around the literal: the
			// head of an agent's history is then allocated at its size,
			// not a third larger.
			n += 23 + len(m.Role)
			lits++
		} else {
			n += 32 + len(m.Role) + len(m.Content) + len(m.Content)/8 // escapes
		}
	}
	out := &upstreamBody{parts: make([]bodyPart, 0, lits)}
	b := make([]byte, 0, n)
	b = append(b, `{"model":`...)
	b = jsonfast.AppendStringPlain(b, p.cfg.Model)
	b = append(b, `,"messages":[`...)
	for i := range req.Messages {
		m := &req.Messages[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":`...)
		b = jsonfast.AppendStringPlain(b, m.Role)
		b = append(b, `,"content":`...)
		if lit, ok := m.ContentJSON(); ok {
			out.head = b
			out.addLiteral(lit) // the text as the client escaped it
		} else {
			b = jsonfast.AppendStringPlain(b, m.Content)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, req.Stream)
	if req.Stream && p.cfg.IncludeUsage {
		b = append(b, `,"stream_options":{"include_usage":true}`...)
	}
	if req.MaxOutputTokens != 0 {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(req.MaxOutputTokens), 10)
	}
	b = appendUpstream(b, req.Upstream)
	out.head = append(b, '}')
	out.n += len(out.head)
	return out, true
}

// appendUpstream appends the upstream settings that are set, in
// wireRequest's order.
func appendUpstream(b []byte, u runner.Upstream) []byte {
	for _, f := range [...]struct{ key, v string }{{`,"reasoning_effort":`, u.ReasoningEffort},
		{`,"prompt_cache_key":`, u.PromptCacheKey}, {`,"safety_identifier":`, u.SafetyIdentifier},
		{`,"service_tier":`, u.ServiceTier}, {`,"user":`, u.User}} {
		if f.v != "" {
			b = append(b, f.key...)
			b = jsonfast.AppendStringPlain(b, f.v)
		}
	}
	return b
}
