package framing

import (
	"strconv"

	"github.com/runedge/runedge/internal/respjson"
	"github.com/runedge/runedge/plugins/guestjson"
)

// The reasoning item's events (Open Responses): output_item.added →
// reasoning_summary_part.added → reasoning_summary_text.delta… →
// reasoning_summary_text.done → reasoning_summary_part.done →
// output_item.done. The summary is one part (summary_index 0).

// AppendReasoningItemEvent appends response.output_item.added (summary ""
// and done false: an empty summary) or .done with the whole summary and
// encrypted, the sealed reasoning ("": none).
func (s *ResponseStream) AppendReasoningItemEvent(dst []byte, seq, outputIndex int, itemID, summary, encrypted string, done bool) []byte {
	dst = itemEventHead(dst, seq, outputIndex, done)
	dst = respjson.AppendSealedReasoningItem(dst, itemID, summary, encrypted)
	return append(dst, '}')
}

// AppendSummaryPart appends response.reasoning_summary_part.added (done
// false, empty text) or .done with the part's whole text.
func (s *ResponseStream) AppendSummaryPart(dst []byte, seq, outputIndex int, itemID, text string, done bool) []byte {
	typ := "response.reasoning_summary_part.added"
	if done {
		typ = "response.reasoning_summary_part.done"
	}
	dst = summaryHead(dst, typ, seq, outputIndex, itemID)
	dst = append(dst, `,"part":{"type":"summary_text","text":`...)
	dst = guestjson.AppendString(dst, text)
	return append(dst, "}}"...)
}

// AppendSummaryText appends response.reasoning_summary_text.delta with a
// piece of the summary, or .done (done true) with all of it.
func (s *ResponseStream) AppendSummaryText(dst []byte, seq, outputIndex int, itemID, text string, done bool) []byte {
	typ, key := "response.reasoning_summary_text.delta", `,"delta":`
	if done {
		typ, key = "response.reasoning_summary_text.done", `,"text":`
	}
	dst = summaryHead(dst, typ, seq, outputIndex, itemID)
	dst = append(dst, key...)
	dst = guestjson.AppendString(dst, text)
	return append(dst, '}')
}

func summaryHead(dst []byte, typ string, seq, outputIndex int, itemID string) []byte {
	dst = head(dst, typ, seq)
	dst = append(dst, `,"item_id":`...)
	dst = guestjson.AppendString(dst, itemID)
	dst = append(dst, `,"output_index":`...)
	dst = strconv.AppendInt(dst, int64(outputIndex), 10)
	return append(dst, `,"summary_index":0`...)
}
