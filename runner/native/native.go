// Package native holds the native wire types that cross the plugin boundary:
// the run request a mapping plugin produces (Request, Message) and the
// agent's answer the host hands back to it (Result, Usage).
//
// It is a leaf package (standard library only) so that both sides of the
// boundary — the host's runner and filters, and guest code compiled to wasm —
// can share one definition without pulling in the runner. The runner
// re-exports these types as aliases (runner.Request = native.Request), so
// either name may be used. Their JSON form is part of the plugin ABI
// (plugins/ABI.md): changing a tag changes what plugins see.
package native

import (
	"encoding/json"
	"math"
	"unsafe"
)

// Message is one input message of the native run request.
type Message struct {
	Role string `json:"role"`
	// Content is the message's text, except while ContentPending: then it
	// holds the client's JSON literal's escaped bytes (SetContentPending).
	// Code that reads the text of a message it did not build reads Text
	// or TextLen, not Content.
	Content string `json:"content"`
	// Ref names a stored item (msg_…, fc_…) that stands for this message:
	// a mapping plugin passes the Responses API's item_reference through
	// as {"ref":"msg_…"}, and the runner resolves it from the tenant's
	// stored items before the agent starts (400 item_not_found
	// otherwise). A resolved message never carries Ref.
	Ref string `json:"ref,omitempty"`
	// RefIndex is the index of the referencing item in the client's input
	// list, for the error that names it (input items and native messages
	// need not line up one to one).
	RefIndex int `json:"ref_index,omitempty"`
	// ToolCalls are the calls an assistant message made (its Content may
	// then be empty). See tools.go.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is set on role "tool": Content is the result of that call.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Parts, on a message whose content is more than text (images,
	// files, audio), are all its content parts in order, text included;
	// Content still holds the text parts' concatenation, so whatever
	// reads only text keeps working. Text-only messages leave it empty
	// (parts.go).
	Parts []Part `json:"parts,omitempty"`
	// Phase is an assistant message's phase as the client replayed it
	// ("commentary", "final_answer"), kept so the stored item shows it.
	Phase string `json:"phase,omitempty"`
	// Reasoning is set on role "reasoning": a reasoning item the client
	// replayed, kept in the history but not sent to an upstream that
	// cannot take it (parts.go).
	Reasoning *Reasoning `json:"reasoning,omitempty"`

	// contentJSON is Content as the JSON string literal it was decoded
	// from (SetContentJSON), and contentAt and contentLen Content's data
	// and length then: a writer copies the literal instead of escaping
	// Content again, as long as Content is still that string
	// (ContentJSON). Strings do not change, so the same data and length
	// are the same text.
	// contentLen is an int32 and the other two share a word so that a
	// Message is 176 bytes, not 184: an agent's history of 400 messages
	// is one array of them per request (RATIONALE.md, "Agent-sized
	// bodies"). A text of 2 GiB or more records no literal.
	contentJSON string
	contentAt   *byte
	contentLen  int32
	// pending, when not 0, is the length of the text that Content stands
	// for while it still holds its literal's escaped bytes
	// (SetContentPending), and its top bit (marshaledBit) says
	// contentJSON is also json.Marshal's form of Content
	// (SetContentJSONMarshaled).
	pending uint32
}

// marshaledBit is the bit of Message.pending that says the literal is
// json.Marshal's form; the rest is the pending text's length, which is
// under 2 GiB.
const marshaledBit = 1 << 31

// pendingLen is the length of the pending text, 0 when none was set.
func (m *Message) pendingLen() int { return int(m.pending &^ marshaledBit) }

// SetContentPending records lit, a JSON string literal with an escape
// that every JSON reader reads as one text of n bytes (as SetContentJSON
// requires), without unescaping it: Content holds lit's bytes between the
// quotes until something reads the text (Text, TextLen, or DecodeContent
// and SetDecodedContent, which put the text in Content). A writer that
// copies the literal (ContentJSON, and ContentMarshaled when marshaled)
// never needs the text: an agent's history goes upstream and into the
// recorded request without its texts unescaped (RATIONALE.md,
// "Agent-sized bodies"). Only code that reads a message's text through
// Text or TextLen may be given such a message; the runner decodes every
// pending text before an agent that does not say it does
// (runner.PendingTextAgent), and a stage that sets Content gives the
// message that text, with no care (the pending text is then gone, as
// ContentJSON's literal is).
func (m *Message) SetContentPending(lit string, n int, marshaled bool) {
	if len(lit) < 2 || n <= 0 || n > math.MaxInt32 {
		panic("native: SetContentPending of a literal without a text")
	}
	m.Content = lit[1 : len(lit)-1]
	m.SetContentJSONMarshaled(lit, marshaled)
	if m.contentJSON == "" {
		// A literal of 2 GiB or more, which no literal is recorded
		// for: the text itself then.
		if err := json.Unmarshal([]byte(lit), &m.Content); err != nil {
			panic("native: a pending literal that is not a JSON string: " + err.Error())
		}
		return
	}
	m.pending |= uint32(n)
}

// ContentPending reports whether Content still holds the escaped bytes
// SetContentPending put there.
func (m *Message) ContentPending() bool {
	return m.pendingLen() > 0 && m.contentJSON != "" && unsafe.StringData(m.Content) == m.contentAt && len(m.Content) == int(m.contentLen)
}

// Text is the message's text: Content, or a pending text unescaped
// (through encoding/json, which reads such a literal as every reader
// does; hot paths decode with the host's unescaper and SetDecodedContent).
func (m *Message) Text() string {
	if !m.ContentPending() {
		return m.Content
	}
	var s string
	if err := json.Unmarshal([]byte(m.contentJSON), &s); err != nil {
		panic("native: a pending literal that is not a JSON string: " + err.Error())
	}
	return s
}

// TextLen is len(m.Text()), without unescaping a pending text.
func (m *Message) TextLen() int {
	if m.ContentPending() {
		return m.pendingLen()
	}
	return len(m.Content)
}

// DecodeContent puts a pending text in Content (Text), keeping its
// literal for the writers that copy it; a message without one is left as
// it is.
func (m *Message) DecodeContent() {
	if m.ContentPending() {
		m.SetDecodedContent(m.Text())
	}
}

// SetDecodedContent gives a pending message its text, unescaped by the
// caller from its literal (ContentJSON), which stays recorded for it; the
// caller vouches that text is what the literal reads as.
func (m *Message) SetDecodedContent(text string) {
	lit, marshaled := m.contentJSON, m.pending&marshaledBit != 0
	m.Content = text
	m.SetContentJSONMarshaled(lit, marshaled)
}

// SetContentJSON records lit, a JSON string literal (quotes included), as
// the form of m.Content to copy into JSON: every JSON reader must read it
// as exactly m.Content (valid UTF-8, no raw control character, no escape
// that decodes to anything else, such as a lone surrogate). The caller
// vouches for that; a host decoder sets it for a text it has just read
// from lit, so that an agent's history goes upstream by copying, not by a
// second escaping (RATIONALE.md, "Agent-sized bodies"). An empty lit
// clears it.
func (m *Message) SetContentJSON(lit string) {
	m.contentJSON, m.contentAt, m.contentLen, m.pending = "", nil, 0, 0
	if lit != "" && len(m.Content) <= math.MaxInt32 {
		m.contentJSON, m.contentAt, m.contentLen = lit, unsafe.StringData(m.Content), int32(len(m.Content))
	}
}

// SetContentJSONMarshaled is SetContentJSON, and marshaled says lit is
// also exactly what json.Marshal writes for m.Content (the caller vouches
// for that too): a writer bound to that form, as the recorded request is,
// copies it then (ContentMarshaled).
func (m *Message) SetContentJSONMarshaled(lit string, marshaled bool) {
	m.SetContentJSON(lit)
	if marshaled && m.contentJSON != "" {
		m.pending = marshaledBit
	}
}

// ContentJSON returns the literal SetContentJSON recorded, when m.Content
// is still the string it was recorded for; ok is false when none was, or
// when Content has been given another value since (a stage that rewrites
// a message's text needs no care: the literal is then not used).
func (m *Message) ContentJSON() (lit string, ok bool) {
	if m.contentJSON == "" || unsafe.StringData(m.Content) != m.contentAt || len(m.Content) != int(m.contentLen) {
		return "", false
	}
	return m.contentJSON, true
}

// ContentMarshaled is ContentJSON for a literal that is also json.Marshal's
// form of m.Content (SetContentJSONMarshaled).
func (m *Message) ContentMarshaled() (lit string, ok bool) {
	if m.pending&marshaledBit == 0 {
		return "", false
	}
	return m.ContentJSON()
}

// Request is the native run request a mapping plugin produces from a
// compatible body.
type Request struct {
	Input        []Message       `json:"input"`
	Instructions string          `json:"instructions,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	SchemaName   string          `json:"schema_name,omitempty"`
	// JSONObject asks for any JSON object (response_format json_object).
	JSONObject      bool `json:"json_object,omitempty"`
	Stream          bool `json:"stream"`
	MaxOutputTokens int  `json:"max_output_tokens,omitempty"`

	// The Responses API's stateful settings (README.md "Responses that remember").
	// PreviousResponseID continues that response: the run joins its
	// session and thread and the agent receives its turns first.
	PreviousResponseID string `json:"previous_response_id,omitempty"`
	// NoStore is store:false: the run is recorded without its input and
	// output, and the response cannot be retrieved or continued.
	NoStore bool `json:"no_store,omitempty"`
	// Background runs outlive the request that started them and are
	// cancelled only by an explicit cancel or shutdown.
	Background bool `json:"background,omitempty"`
	// Tools are the client's function tools; ToolChoice (zero: auto) and
	// ParallelToolCalls (nil: true) say how the model may use them.
	Tools             []Tool     `json:"tools,omitempty"`
	ToolChoice        ToolChoice `json:"tool_choice,omitzero"`
	ParallelToolCalls *bool      `json:"parallel_tool_calls,omitempty"`
	// MaxToolCalls bounds the tool calls one answer may make (0: no bound;
	// a mapping expresses "none" as ToolChoice none). The agent keeps the
	// first MaxToolCalls calls and drops the rest.
	MaxToolCalls int `json:"max_tool_calls,omitempty"`
	// Upstream holds settings the provider passes to its upstream as the
	// client gave them (Responses: reasoning.effort, prompt_cache_key,
	// safety_identifier, service_tier, user).
	Upstream Upstream `json:"upstream,omitzero"`
	// WithheldTools are the client's hosted tools (web_search, mcp …) that
	// the mapping did not offer to the model, because the agent cannot run
	// them: recorded with the run, counted by the host, or refused by it
	// (tools.hosted: refuse).
	WithheldTools []WithheldTool `json:"withheld_tools,omitempty"`
}

// Upstream is what a provider passes on to a model upstream unchanged. A
// provider whose upstream has no such setting (the offline one) ignores it;
// the openai provider sends each that is set under its chat completions
// name.
type Upstream struct {
	ReasoningEffort  string `json:"reasoning_effort,omitempty"`
	PromptCacheKey   string `json:"prompt_cache_key,omitempty"`
	SafetyIdentifier string `json:"safety_identifier,omitempty"`
	ServiceTier      string `json:"service_tier,omitempty"`
	User             string `json:"user,omitempty"`
}

// Usage counts tokens. The details are what the upstream reported (0 when
// it reported none): CachedTokens of the input read from its prompt cache,
// CacheWriteTokens written to it, ReasoningTokens of the output spent on
// reasoning.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CachedTokens     int `json:"cached_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
}

// Result is what the agent produced.
type Result struct {
	Text string `json:"text"`
	// FinishReason is "stop", "length", or "tool_calls" when the answer
	// is ToolCalls (Text may then be empty or hold what the model said
	// before calling).
	FinishReason string     `json:"finish_reason"`
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	// Reasoning is the model's reasoning text, when the upstream gave it
	// (reasoning_content or reasoning in chat completions); "" otherwise.
	Reasoning string `json:"reasoning,omitempty"`
	Usage     Usage  `json:"usage"`
	// Attempts is how many times the agent asked the provider for this
	// answer: 1, or 2 when structured output needed a repair. The agent
	// sets it on failures too, so the run records what it cost.
	Attempts int `json:"attempts,omitempty"`
}
