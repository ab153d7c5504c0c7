package sdk

import "errors"

// StreamInput is the input of a map_stream call, decoded (plugins/ABI.md,
// "runedge_map_stream").
type StreamInput struct {
	Endpoint string // "chat.completions" or "responses"
	ID       string // the id of the reply being streamed
	TenantID string // the tenant the reply is for
	// Text is what the previous call held back followed by the text
	// streamed since.
	Text string
	// Final is set on the last call of a stream, when nothing more will
	// come: everything must be emitted.
	Final bool
}

// StreamOutput is the output of a map_stream call.
type StreamOutput struct {
	Emit string // text to send to the client now
	// Hold is text to keep back, such as the start of a word that the next
	// text may complete; the host prepends it to the next call's Text. The
	// plugin keeps no state between calls: this is where its state goes.
	Hold string
}

// MapStreamFunc makes a Hooks.MapStream hook of fn, decoding the JSON input
// and encoding the output, so that a plugin handles text, not JSON. It
// avoids encoding/json, whose reflection costs tens of microseconds per call
// in a wasm guest: this hook runs for every batch of every stream. On the
// final call, text fn still holds is emitted.
//
//	sdk.Register(sdk.Hooks{MapStream: sdk.MapStreamFunc(redact)})
func MapStreamFunc(fn func(StreamInput) (StreamOutput, error)) func([]byte) ([]byte, error) {
	var buf []byte // reused: the host copies the output before the next call
	return func(in []byte) ([]byte, error) {
		si, err := ParseStreamInput(in)
		if err != nil {
			return nil, err
		}
		so, err := fn(si)
		if err != nil {
			return nil, err
		}
		if si.Final && so.Hold != "" {
			so.Emit, so.Hold = so.Emit+so.Hold, ""
		}
		buf = so.AppendJSON(buf[:0])
		return buf, nil
	}
}

// ParseStreamInput decodes the input of map_stream. Fields it does not know
// are ignored, so that the host may add some. Like the input itself, the
// strings it returns may alias in: a hook must not keep them after it
// returns (copy with strings.Clone what must outlive the call).
func ParseStreamInput(in []byte) (StreamInput, error) {
	var si StreamInput
	s := jsonScanner{b: in}
	more, err := s.openObject()
	for more && err == nil {
		var key string
		if key, err = s.key(); err != nil {
			break
		}
		switch key {
		case "endpoint":
			si.Endpoint, err = s.string()
		case "id":
			si.ID, err = s.string()
		case "tenant_id":
			si.TenantID, err = s.string()
		case "text":
			si.Text, err = s.string()
		case "final":
			si.Final, err = s.boolean()
		default:
			err = s.skipValue()
		}
		if err == nil {
			more, err = s.next()
		}
	}
	if err != nil {
		return StreamInput{}, errors.New("map_stream input: " + err.Error())
	}
	return si, nil
}

// AppendJSON appends o as the output of map_stream,
// {"emit":"...","hold":"..."}.
func (o StreamOutput) AppendJSON(b []byte) []byte {
	b = append(b, `{"emit":`...)
	b = appendJSONString(b, o.Emit)
	b = append(b, `,"hold":`...)
	b = appendJSONString(b, o.Hold)
	return append(b, '}')
}
