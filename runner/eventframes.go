package runner

import (
	"bytes"
	"errors"
)

// Stores keep a batch of stream events as one value, each event framed as
// "name\ndata\n": the data is compact JSON, which has no raw newline, so
// the framing needs no escaping and a batch is written and read in one
// piece.

// AppendEventFrames appends batch in the stored framing.
func AppendEventFrames(dst []byte, batch []StoredEvent) []byte {
	for _, ev := range batch {
		dst = append(dst, ev.Name...)
		dst = append(dst, '\n')
		dst = append(dst, ev.Data...)
		dst = append(dst, '\n')
	}
	return dst
}

// ParseEventFrames reads a stored batch whose first event has sequence
// number first.
func ParseEventFrames(first int, frames []byte) ([]StoredEvent, error) {
	var out []StoredEvent
	for seq := first; len(frames) > 0; seq++ {
		i := bytes.IndexByte(frames, '\n')
		if i < 0 {
			return nil, errors.New("runner: stored event batch is cut short")
		}
		name := string(frames[:i])
		frames = frames[i+1:]
		j := bytes.IndexByte(frames, '\n')
		if j < 0 {
			return nil, errors.New("runner: stored event batch is cut short")
		}
		out = append(out, StoredEvent{Seq: seq, Name: name, Data: frames[:j:j]})
		frames = frames[j+1:]
	}
	return out, nil
}

// AppendEventsAfter appends to dst the events of a stored batch (first,
// frames) whose Seq is after after: a store's paged read (HistoryStore.Events)
// keeps only what follows the reader's cursor.
func AppendEventsAfter(dst []StoredEvent, first int, frames []byte, after int) ([]StoredEvent, error) {
	evs, err := ParseEventFrames(first, frames)
	if err != nil {
		return dst, err
	}
	for _, ev := range evs {
		if ev.Seq > after {
			dst = append(dst, ev)
		}
	}
	return dst, nil
}
