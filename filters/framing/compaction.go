package framing

import "strconv"

// ItemEvent is the name of an output item's event: response.output_item.added,
// or .done (done true).
func ItemEvent(done bool) string {
	if done {
		return "response.output_item.done"
	}
	return "response.output_item.added"
}

// itemEventHead appends the opening of an output item's event up to its
// item: {"type":…,"sequence_number":…,"output_index":…,"item":
func itemEventHead(dst []byte, seq, index int, done bool) []byte {
	dst = head(dst, ItemEvent(done), seq)
	dst = append(dst, `,"output_index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	return append(dst, `,"item":`...)
}

// AppendItemEvent appends response.output_item.added (done false) or
// .done for an item that is whole from the start, item (JSON) at output
// index: a compaction item (filters/compaction) has nothing to stream, so
// both events carry all of it.
func (s *ResponseStream) AppendItemEvent(dst []byte, seq, index int, done bool, item []byte) []byte {
	dst = itemEventHead(dst, seq, index, done)
	dst = append(dst, item...)
	return append(dst, '}')
}
