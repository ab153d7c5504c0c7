package abi

import (
	"errors"
	"strconv"

	"github.com/runedge/runedge/plugins/guestjson"
	"github.com/runedge/runedge/runner/native"
)

// ResultInput is the input of map_result:
//
//	{"endpoint","id","message_id","created","completed","session_id","run_id","model","status":"completed"|"in_progress",
//	 "result":{"text","finish_reason","tool_calls":[{"id","name","arguments"}...],
//	           "usage":{"input_tokens","output_tokens","total_tokens"[,"cached_tokens","cache_write_tokens","reasoning_tokens"]}},
//	 "echo":{...from map_request...}}
//
// ID is the reply's id (chatcmpl-…, resp_…), MessageID the id of its output
// message, Created its Unix time. tool_calls is left out when there are
// none. For ResultInProgress the result is empty and its usage null.
type ResultInput struct {
	Endpoint  string
	ID        string
	MessageID string
	Created   int64
	// Completed is when the response completed (Unix seconds), 0 while it
	// runs or when the host does not know; written only when set.
	Completed int64
	SessionID string // the run's session
	RunID     string // the run
	Model     string
	Status    string
	Result    native.Result
	Echo      []byte
}

// AppendJSON appends the map_result input. An empty Echo is written as {}.
func (in *ResultInput) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"endpoint":`...)
	dst = guestjson.AppendString(dst, in.Endpoint)
	dst = append(dst, `,"id":`...)
	dst = guestjson.AppendString(dst, in.ID)
	dst = append(dst, `,"message_id":`...)
	dst = guestjson.AppendString(dst, in.MessageID)
	dst = append(dst, `,"created":`...)
	dst = strconv.AppendInt(dst, in.Created, 10)
	if in.Completed > 0 {
		dst = append(dst, `,"completed":`...)
		dst = strconv.AppendInt(dst, in.Completed, 10)
	}
	dst = append(dst, `,"session_id":`...)
	dst = guestjson.AppendString(dst, in.SessionID)
	dst = append(dst, `,"run_id":`...)
	dst = guestjson.AppendString(dst, in.RunID)
	dst = append(dst, `,"model":`...)
	dst = guestjson.AppendString(dst, in.Model)
	dst = append(dst, `,"status":`...)
	dst = guestjson.AppendString(dst, in.Status)
	dst = append(dst, `,"result":{"text":`...)
	dst = guestjson.AppendString(dst, in.Result.Text)
	dst = append(dst, `,"finish_reason":`...)
	dst = guestjson.AppendString(dst, in.Result.FinishReason)
	if len(in.Result.ToolCalls) > 0 {
		dst = appendToolCalls(dst, in.Result.ToolCalls)
	}
	if in.Result.Reasoning != "" {
		dst = append(dst, `,"reasoning":`...)
		dst = guestjson.AppendString(dst, in.Result.Reasoning)
	}
	dst = append(dst, `,"usage":`...)
	dst = append(appendUsage(dst, in.Status, in.Result), '}')
	dst = append(dst, `,"echo":`...)
	if len(in.Echo) == 0 {
		dst = append(dst, "{}"...)
	} else {
		dst = append(dst, in.Echo...)
	}
	return append(dst, '}')
}

// ResultView is a map_result input as a guest reads it: each field is the
// JSON value as written (quotes and escapes included, "" when absent), so
// that a mapping can copy text into its output without decoding and
// re-encoding it (see guestjson.AppendStringValue). Decode gives the typed
// form.
type ResultView struct {
	Endpoint, ID, MessageID, Created, Model, Status guestjson.Value
	SessionID, RunID, Completed                     guestjson.Value
	Text, FinishReason, Usage, Echo                 guestjson.Value
	// ToolCalls is the array of the result's tool calls (EachToolCall).
	ToolCalls guestjson.Value
	// Reasoning is the upstream's reasoning text, a string or absent.
	Reasoning guestjson.Value
}

// ViewResultInput reads a map_result input in the guest, in one pass and
// without allocating; the view aliases in. It refuses an input without what
// every reply needs: a non-empty string id, a string model and a numeric
// created time.
func ViewResultInput(in []byte) (ResultView, error) {
	var r ResultView
	v := guestjson.Parse(guestjson.View(in))
	if !isObject(v) {
		return r, errors.New("abi: map_result input is not a JSON object")
	}
	v.Members(r.collect)
	return r, r.Check()
}

// Check refuses a view without what every reply needs: a non-empty
// string id, a string model and a numeric created time.
func (r *ResultView) Check() error {
	if !r.ID.IsString() || r.ID == `""` {
		return errors.New("abi: map_result input needs a string id")
	}
	if !r.Model.IsString() {
		return errors.New("abi: map_result input needs a string model")
	}
	if _, ok := r.Created.Num(); !ok {
		return errors.New("abi: map_result input needs a numeric created time")
	}
	return nil
}

// collect is a Members callback over the input's top level.
func (r *ResultView) collect(k, v guestjson.Value) bool {
	switch {
	case k.Is("endpoint"):
		r.Endpoint = v
	case k.Is("id"):
		r.ID = v
	case k.Is("message_id"):
		r.MessageID = v
	case k.Is("created"):
		r.Created = v
	case k.Is("completed"):
		r.Completed = v
	case k.Is("model"):
		r.Model = v
	case k.Is("status"):
		r.Status = v
	case k.Is("echo"):
		r.Echo = v
	case k.Is("session_id"):
		r.SessionID = v
	case k.Is("run_id"):
		r.RunID = v
	case k.Is("result"):
		v.Members(r.collectResult)
	}
	return true
}

func (r *ResultView) collectResult(k, v guestjson.Value) bool {
	switch {
	case k.Is("text"):
		r.Text = v
	case k.Is("finish_reason"):
		r.FinishReason = v
	case k.Is("usage"):
		r.Usage = v
	case k.Is("tool_calls"):
		r.ToolCalls = v
	case k.Is("reasoning"):
		r.Reasoning = v
	}
	return true
}

// HasToolCalls reports whether the result has tool calls.
func (r *ResultView) HasToolCalls() bool {
	return r.ToolCalls.IsArray() && r.ToolCalls != "[]"
}

// EachToolCall calls fn with the index, id, name and arguments (values as
// written) of every tool call.
func (r *ResultView) EachToolCall(fn func(i int, id, name, args guestjson.Value)) {
	i := 0
	r.ToolCalls.Elements(func(c guestjson.Value) bool {
		var id, name, args guestjson.Value
		c.Members(func(k, v guestjson.Value) bool {
			switch {
			case k.Is("id"):
				id = v
			case k.Is("name"):
				name = v
			case k.Is("arguments"):
				args = v
			}
			return true
		})
		fn(i, id, name, args)
		i++
		return true
	})
}

// ReadUsage reads the usage object; a missing total is the sum of the parts, so
// a provider that reports only the parts still yields a consistent reply.
func (r *ResultView) ReadUsage() native.Usage {
	var u native.Usage
	total := -1
	r.Usage.Members(func(k, v guestjson.Value) bool {
		n, _ := v.Num()
		switch {
		case k.Is("input_tokens"):
			u.InputTokens = int(n)
		case k.Is("output_tokens"):
			u.OutputTokens = int(n)
		case k.Is("total_tokens"):
			total = int(n)
		case k.Is("cached_tokens"):
			u.CachedTokens = int(n)
		case k.Is("cache_write_tokens"):
			u.CacheWriteTokens = int(n)
		case k.Is("reasoning_tokens"):
			u.ReasoningTokens = int(n)
		}
		return true
	})
	if total < 0 {
		total = u.InputTokens + u.OutputTokens
	}
	u.TotalTokens = total
	return u
}

// Decode returns the typed input. Strings without escapes and Echo alias
// the input the view was read from.
func (r *ResultView) Decode() ResultInput {
	created, _ := r.Created.Num()
	completed, _ := r.Completed.Num()
	var calls []native.ToolCall
	r.EachToolCall(func(_ int, id, name, args guestjson.Value) {
		calls = append(calls, native.ToolCall{ID: id.Str(), Name: name.Str(), Arguments: args.Str()})
	})
	return ResultInput{
		Endpoint: r.Endpoint.Str(), ID: r.ID.Str(), MessageID: r.MessageID.Str(),
		Created: int64(created), Completed: int64(completed), SessionID: r.SessionID.Str(), RunID: r.RunID.Str(), Model: r.Model.Str(), Status: r.Status.Str(),
		Result: native.Result{Text: r.Text.Str(), FinishReason: r.FinishReason.Str(), ToolCalls: calls, Usage: r.ReadUsage(),
			Reasoning: r.Reasoning.Str()},
		Echo: r.Echo.Bytes(),
	}
}

// ParseResultInput reads a map_result input in the guest into its typed
// form (ViewResultInput, then Decode).
func ParseResultInput(in []byte) (ResultInput, error) {
	v, err := ViewResultInput(in)
	if err != nil {
		return ResultInput{}, err
	}
	return v.Decode(), nil
}

// appendUsage appends the result's usage object, null while in progress.
func appendUsage(dst []byte, status string, r native.Result) []byte {
	if status == ResultInProgress {
		return append(dst, "null"...)
	}
	u := r.Usage
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.InputTokens), 10)
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.OutputTokens), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.TotalTokens), 10)
	// The details only when reported, so a plugin built before them reads
	// the same object.
	for _, d := range [...]struct {
		name string
		n    int
	}{{`,"cached_tokens":`, u.CachedTokens}, {`,"cache_write_tokens":`, u.CacheWriteTokens}, {`,"reasoning_tokens":`, u.ReasoningTokens}} {
		if d.n != 0 {
			dst = append(dst, d.name...)
			dst = strconv.AppendInt(dst, int64(d.n), 10)
		}
	}
	return append(dst, '}')
}

// appendToolCalls appends ,"tool_calls":[{"id","name","arguments"}...].
func appendToolCalls(dst []byte, calls []native.ToolCall) []byte {
	return appendToolCallArray(append(dst, `,"tool_calls":`...), calls)
}

// appendToolCallArray appends [{"id","name","arguments"}...].
func appendToolCallArray(dst []byte, calls []native.ToolCall) []byte {
	dst = append(dst, '[')
	for i, c := range calls {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = guestjson.AppendString(dst, c.ID)
		dst = append(dst, `,"name":`...)
		dst = guestjson.AppendString(dst, c.Name)
		dst = append(dst, `,"arguments":`...)
		dst = guestjson.AppendString(dst, c.Arguments)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// AppendChatUsage appends a chat.completion usage object. The host's stream
// framing (the last chunk of include_usage) and the default chat mapping
// (the whole reply) both write it here, so the two agree. The details
// objects are optional in the schema, but common clients read
// prompt_tokens_details.cached_tokens without checking, so they are present,
// with what the upstream reported (0 when it reported none).
func AppendChatUsage(dst []byte, u native.Usage) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.InputTokens), 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.OutputTokens), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.TotalTokens), 10)
	dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.CachedTokens), 10)
	dst = append(dst, `},"completion_tokens_details":{"reasoning_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.ReasoningTokens), 10)
	return append(dst, `}}`...)
}
