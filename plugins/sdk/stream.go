package sdk

import "github.com/runedge/runedge/plugins/abi"

// StreamInput is the input of a map_stream call, decoded
// (plugins/abi, plugins/ABI.md "runedge_map_stream").
type StreamInput = abi.StreamInput

// StreamOutput is the output of a map_stream call.
type StreamOutput = abi.StreamOutput

// MapStreamFunc makes a Hooks.MapStream hook of fn, decoding the JSON input
// and encoding the output with the ABI's codec, so that a plugin handles
// text, not JSON. It avoids encoding/json, whose reflection costs tens of
// microseconds per call in a wasm guest: this hook runs for every batch of
// every stream. On the final call, text fn still holds is emitted.
//
//	sdk.Register(sdk.Hooks{MapStream: sdk.MapStreamFunc(redact)})
func MapStreamFunc(fn func(StreamInput) (StreamOutput, error)) func([]byte) ([]byte, error) {
	var buf []byte // reused: the host copies the output before the next call
	return func(in []byte) ([]byte, error) {
		si, err := abi.ParseStreamInput(in)
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

// ParseStreamInput decodes the input of map_stream (abi.ParseStreamInput).
// Like the input itself, the strings it returns may alias in: a hook must
// not keep them after it returns (copy with strings.Clone what must outlive
// the call).
func ParseStreamInput(in []byte) (StreamInput, error) { return abi.ParseStreamInput(in) }
