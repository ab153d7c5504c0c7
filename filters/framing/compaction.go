package framing

import "strconv"

// AppendItemEvent appends response.output_item.added (done false) or
// .done for an item that is whole from the start, item (JSON) at output
// index: a compaction item (filters/compaction) has nothing to stream, so
// both events carry all of it.
func (s *ResponseStream) AppendItemEvent(dst []byte, seq, index int, done bool, item []byte) []byte {
	typ := "response.output_item.added"
	if done {
		typ = "response.output_item.done"
	}
	dst = head(dst, typ, seq)
	dst = append(dst, `,"output_index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	dst = append(dst, `,"item":`...)
	dst = append(dst, item...)
	return append(dst, '}')
}
