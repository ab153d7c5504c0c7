package framing

import (
	"strconv"

	"github.com/runedge/runedge/internal/respjson"
	"github.com/runedge/runedge/plugins/guestjson"
)

// AppendToolCall appends a chunk carrying one fragment of tool call index:
// the first fragment of a call has its id and name (and type), as the SDKs'
// stream accumulators expect; later ones only a piece of the arguments.
func (s *ChatStream) AppendToolCall(dst []byte, index int, id, name, arguments string) []byte {
	dst = append(dst, s.prefix...)
	dst = append(dst, `{"index":0,"delta":{"tool_calls":[{"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	if id != "" {
		dst = append(dst, `,"id":`...)
		dst = guestjson.AppendString(dst, id)
		dst = append(dst, `,"type":"function","function":{"name":`...)
		dst = guestjson.AppendString(dst, name)
		dst = append(dst, `,"arguments":`...)
	} else {
		dst = append(dst, `,"function":{"arguments":`...)
	}
	dst = guestjson.AppendString(dst, arguments)
	return append(dst, `}}]`+chunkOpen...)
}

// AppendCallAdded appends response.output_item.added for a call item (a
// function_call, namespaced or not, or a custom_tool_call), in progress
// with no arguments or input yet.
func (s *ResponseStream) AppendCallAdded(dst []byte, seq, outputIndex int, c respjson.CallItem) []byte {
	dst = head(dst, "response.output_item.added", seq)
	dst = append(dst, `,"output_index":`...)
	dst = strconv.AppendInt(dst, int64(outputIndex), 10)
	dst = append(dst, `,"item":`...)
	c.Arguments, c.Status = "", "in_progress"
	dst = respjson.AppendCallItem(dst, c)
	return append(dst, '}')
}

// AppendCustomInput appends response.custom_tool_call_input.delta (done
// false) or .done (done true) with the whole input: a custom call's input is
// the input argument of the function it was offered as, known once the
// arguments are complete, so it is sent in one piece.
func (s *ResponseStream) AppendCustomInput(dst []byte, seq, outputIndex int, itemID, input string, done bool) []byte {
	if done {
		dst = head(dst, "response.custom_tool_call_input.done", seq)
	} else {
		dst = head(dst, "response.custom_tool_call_input.delta", seq)
	}
	dst = append(dst, `,"item_id":`...)
	dst = guestjson.AppendString(dst, itemID)
	dst = append(dst, `,"output_index":`...)
	dst = strconv.AppendInt(dst, int64(outputIndex), 10)
	if done {
		dst = append(dst, `,"input":`...)
	} else {
		dst = append(dst, `,"delta":`...)
	}
	dst = guestjson.AppendString(dst, input)
	return append(dst, '}')
}

// AppendArgumentsDelta appends response.function_call_arguments.delta.
func (s *ResponseStream) AppendArgumentsDelta(dst []byte, seq, outputIndex int, itemID, delta string) []byte {
	dst = head(dst, "response.function_call_arguments.delta", seq)
	dst = append(dst, `,"item_id":`...)
	dst = guestjson.AppendString(dst, itemID)
	dst = append(dst, `,"output_index":`...)
	dst = strconv.AppendInt(dst, int64(outputIndex), 10)
	dst = append(dst, `,"delta":`...)
	dst = guestjson.AppendString(dst, delta)
	return append(dst, '}')
}

// AppendArgumentsDone appends response.function_call_arguments.done with
// the whole arguments.
func (s *ResponseStream) AppendArgumentsDone(dst []byte, seq, outputIndex int, itemID, name, arguments string) []byte {
	dst = head(dst, "response.function_call_arguments.done", seq)
	dst = append(dst, `,"item_id":`...)
	dst = guestjson.AppendString(dst, itemID)
	dst = append(dst, `,"name":`...)
	dst = guestjson.AppendString(dst, name)
	dst = append(dst, `,"output_index":`...)
	dst = strconv.AppendInt(dst, int64(outputIndex), 10)
	dst = append(dst, `,"arguments":`...)
	dst = guestjson.AppendString(dst, arguments)
	return append(dst, '}')
}

// AppendCallDone appends response.output_item.done for a completed call
// item.
func (s *ResponseStream) AppendCallDone(dst []byte, seq, outputIndex int, c respjson.CallItem) []byte {
	dst = head(dst, "response.output_item.done", seq)
	dst = append(dst, `,"output_index":`...)
	dst = strconv.AppendInt(dst, int64(outputIndex), 10)
	dst = append(dst, `,"item":`...)
	c.Status = "completed"
	dst = respjson.AppendCallItem(dst, c)
	return append(dst, '}')
}
