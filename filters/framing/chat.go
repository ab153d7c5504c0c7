package framing

import (
	"strconv"

	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/guestjson"
	"github.com/runedge/runedge/runner/native"
)

// ChatStream builds the JSON of chat.completion.chunk objects for one reply.
// Everything before "choices" is the same in every chunk, so it is encoded
// once; each Append… then only copies it and the delta, which keeps chunk
// building free of allocations when dst has room.
//
// The host writes the SSE framing ("data: …\n\n", "data: [DONE]").
type ChatStream struct {
	prefix []byte // {"id":…,"object":"chat.completion.chunk","created":…,"model":…,"choices":[
}

// NewChatStream prepares the chunks of the reply id, created at created
// (Unix seconds) by model.
func NewChatStream(id string, created int64, model string) *ChatStream {
	p := make([]byte, 0, len(id)+len(model)+96)
	p = append(p, `{"id":`...)
	p = guestjson.AppendString(p, id)
	p = append(p, `,"object":"chat.completion.chunk","created":`...)
	p = strconv.AppendInt(p, created, 10)
	p = append(p, `,"model":`...)
	p = guestjson.AppendString(p, model)
	p = append(p, `,"choices":[`...)
	return &ChatStream{prefix: p}
}

// The end of a choice whose stream goes on.
const chunkOpen = `},"logprobs":null,"finish_reason":null}]}`

// AppendRole appends the first chunk, which names the role as strict
// clients expect.
func (s *ChatStream) AppendRole(dst []byte) []byte {
	dst = append(dst, s.prefix...)
	return append(dst, `{"index":0,"delta":{"role":"assistant","content":""`+chunkOpen...)
}

// AppendDelta appends a chunk carrying the next piece of text.
func (s *ChatStream) AppendDelta(dst []byte, text string) []byte {
	dst = append(dst, s.prefix...)
	dst = append(dst, `{"index":0,"delta":{"content":`...)
	dst = guestjson.AppendString(dst, text)
	return append(dst, chunkOpen...)
}

// AppendFinish appends the chunk that ends the choice with finishReason
// ("stop" or "length").
func (s *ChatStream) AppendFinish(dst []byte, finishReason string) []byte {
	dst = append(dst, s.prefix...)
	dst = append(dst, `{"index":0,"delta":{},"logprobs":null,"finish_reason":`...)
	dst = guestjson.AppendString(dst, finishReason)
	return append(dst, `}]}`...)
}

// AppendUsage appends the usage chunk, which has no choices. Send it only
// when the request asked for stream_options.include_usage.
func (s *ChatStream) AppendUsage(dst []byte, u native.Usage) []byte {
	dst = append(dst, s.prefix...)
	dst = append(dst, `],"usage":`...)
	dst = abi.AppendChatUsage(dst, u)
	return append(dst, '}')
}
