package framing

import (
	"strconv"

	"github.com/runedge/runedge/internal/respjson"
	"github.com/runedge/runedge/plugins/guestjson"
)

// ResponseStream builds the JSON data of the Responses streaming events for
// one response with a single output message. The host writes the SSE
// framing ("event: <type>" and "data: <json>") and supplies the sequence
// numbers, which count every event of the stream.
//
// The message's item_id and indexes never change, so they are encoded once;
// with room in dst no Append… method allocates.
type ResponseStream struct {
	responseID, messageID string
	itemRef               []byte // ,"item_id":"msg_…","output_index":0,"content_index":0
	itemID                []byte // "msg_…" as a JSON string
	index                 []byte // ,"output_index":0,"item": (the message's)
}

// NewResponseStream prepares the events of response responseID whose output
// message is messageID, output 0.
func NewResponseStream(responseID, messageID string) *ResponseStream {
	return NewResponseStreamAt(responseID, messageID, 0)
}

// NewResponseStreamAt is NewResponseStream for a message at output index
// (1 after a compaction item).
func NewResponseStreamAt(responseID, messageID string, index int) *ResponseStream {
	id := guestjson.AppendString(nil, messageID)
	ref := make([]byte, 0, len(id)+48)
	ref = append(ref, `,"item_id":`...)
	ref = append(ref, id...)
	ref = append(ref, `,"output_index":`...)
	ref = strconv.AppendInt(ref, int64(index), 10)
	ref = append(ref, `,"content_index":0`...)
	idx := strconv.AppendInt([]byte(`,"output_index":`), int64(index), 10)
	idx = append(idx, `,"item":`...)
	return &ResponseStream{responseID: responseID, messageID: messageID, itemRef: ref, itemID: id, index: idx}
}

// ResponseID returns the id of the response the events belong to.
func (s *ResponseStream) ResponseID() string { return s.responseID }

// MessageID returns the id of the output message the events describe.
func (s *ResponseStream) MessageID() string { return s.messageID }

// head appends the opening of an event of type typ.
func head(dst []byte, typ string, seq int) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","sequence_number":`...)
	return strconv.AppendInt(dst, int64(seq), 10)
}

// AppendCreated appends response.created carrying response, the in-progress
// Response object from MapResult.
func (s *ResponseStream) AppendCreated(dst []byte, seq int, response []byte) []byte {
	dst = head(dst, "response.created", seq)
	dst = append(dst, `,"response":`...)
	dst = append(dst, response...)
	return append(dst, '}')
}

// AppendItemAdded appends response.output_item.added for the message, still
// in progress and without content.
func (s *ResponseStream) AppendItemAdded(dst []byte, seq int) []byte {
	dst = head(dst, "response.output_item.added", seq)
	dst = append(dst, s.index...)
	dst = append(dst, respjson.ItemHead...)
	dst = append(dst, s.itemID...)
	return append(dst, respjson.MessageInProgress+`}`...)
}

// AppendPartAdded appends response.content_part.added for the empty
// output_text part.
func (s *ResponseStream) AppendPartAdded(dst []byte, seq int) []byte {
	dst = head(dst, "response.content_part.added", seq)
	dst = append(dst, s.itemRef...)
	return append(dst, `,"part":`+respjson.OutputTextHead+`""`+respjson.OutputTextTail+`}`...)
}

// AppendTextDelta appends response.output_text.delta with the next piece of
// text.
func (s *ResponseStream) AppendTextDelta(dst []byte, seq int, delta string) []byte {
	dst = head(dst, "response.output_text.delta", seq)
	dst = append(dst, s.itemRef...)
	dst = append(dst, `,"delta":`...)
	dst = guestjson.AppendString(dst, delta)
	return append(dst, `,"logprobs":[]}`...)
}

// AppendTextDone appends response.output_text.done with the whole text.
func (s *ResponseStream) AppendTextDone(dst []byte, seq int, text string) []byte {
	dst = head(dst, "response.output_text.done", seq)
	dst = append(dst, s.itemRef...)
	dst = append(dst, `,"text":`...)
	dst = guestjson.AppendString(dst, text)
	return append(dst, `,"logprobs":[]}`...)
}

// AppendPartDone appends response.content_part.done with the finished part.
func (s *ResponseStream) AppendPartDone(dst []byte, seq int, text string) []byte {
	dst = head(dst, "response.content_part.done", seq)
	dst = append(dst, s.itemRef...)
	dst = append(dst, `,"part":`+respjson.OutputTextHead...)
	dst = guestjson.AppendString(dst, text)
	return append(dst, respjson.OutputTextTail+`}`...)
}

// AppendItemDone appends response.output_item.done with the completed
// message and its whole content.
func (s *ResponseStream) AppendItemDone(dst []byte, seq int, text string) []byte {
	dst = head(dst, "response.output_item.done", seq)
	dst = append(dst, s.index...)
	dst = append(dst, respjson.ItemHead...)
	dst = append(dst, s.itemID...)
	dst = append(dst, respjson.MessageCompleted...)
	dst = guestjson.AppendString(dst, text)
	return append(dst, respjson.MessageTail+`}`...)
}

// AppendCompleted appends the terminal event carrying response, the final
// Response object from MapResult. Its type follows the response's status:
// response.incomplete or response.failed where that is the status, as
// clients wait for the event named after the outcome; otherwise
// response.completed.
func (s *ResponseStream) AppendCompleted(dst []byte, seq int, response []byte) []byte {
	typ := "response.completed"
	switch status := guestjson.Parse(guestjson.View(response)).Get("status"); {
	case status.Is("incomplete"):
		typ = "response.incomplete"
	case status.Is("failed"):
		typ = "response.failed"
	}
	dst = head(dst, typ, seq)
	dst = append(dst, `,"response":`...)
	dst = append(dst, response...)
	return append(dst, '}')
}

// AppendError appends an error event (AppendErrorEvent).
func (s *ResponseStream) AppendError(dst []byte, seq int, typ, code, message, param string) []byte {
	return AppendErrorEvent(dst, seq, typ, code, message, param)
}

// AppendErrorEvent appends a Responses error event. It carries the error
// twice: flat (code, message, param), as the OpenAI API and its SDKs read
// it, and as the object "error" {type, code, message, param} that the Open
// Responses specification requires. An empty code or param is written as
// null, as the API does for errors that have none.
func AppendErrorEvent(dst []byte, seq int, typ, code, message, param string) []byte {
	dst = head(dst, "error", seq)
	mark := len(dst)
	dst = append(dst, `,"code":`...)
	dst = appendStringOrNull(dst, code)
	dst = append(dst, `,"message":`...)
	dst = guestjson.AppendString(dst, message)
	dst = append(dst, `,"param":`...)
	dst = appendStringOrNull(dst, param)
	fields := len(dst)
	dst = append(dst, `,"error":{"type":`...)
	dst = guestjson.AppendString(dst, typ)
	dst = append(dst, dst[mark:fields]...)
	return append(dst, "}}"...)
}

func appendStringOrNull(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, `null`...)
	}
	return guestjson.AppendString(dst, s)
}
