package abi

import (
	"errors"

	"github.com/runedge/runedge/plugins/guestjson"
)

// StreamInput is the input of map_stream:
//
//	{"endpoint":"chat.completions","id":"chatcmpl-123","tenant_id":"acme","text":"Call me at 555-01","final":false}
type StreamInput struct {
	Endpoint string // EndpointChat or EndpointResponses
	ID       string // the id of the reply being streamed
	TenantID string // the tenant the reply is for
	// Text is what the previous call held back followed by the text
	// streamed since.
	Text string
	// Final is set on the last call of a stream, when nothing more will
	// come: everything must be emitted.
	Final bool
}

// AppendJSON appends the map_stream input.
func (in *StreamInput) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"endpoint":`...)
	dst = guestjson.AppendString(dst, in.Endpoint)
	dst = append(dst, `,"id":`...)
	dst = guestjson.AppendString(dst, in.ID)
	dst = append(dst, `,"tenant_id":`...)
	dst = guestjson.AppendString(dst, in.TenantID)
	dst = append(dst, `,"text":`...)
	dst = guestjson.AppendString(dst, in.Text)
	if in.Final {
		return append(dst, `,"final":true}`...)
	}
	return append(dst, `,"final":false}`...)
}

// ParseStreamInput reads a map_stream input in the guest. Fields it does not
// know are ignored, so that the host may add some. Strings without escapes
// alias in: a hook must not keep them after it returns (copy with
// strings.Clone what must outlive the call).
func ParseStreamInput(in []byte) (StreamInput, error) {
	v := guestjson.Parse(guestjson.View(in))
	if !isObject(v) {
		return StreamInput{}, errors.New("map_stream input: want an object")
	}
	var si StreamInput
	var err error
	v.Members(func(k, v guestjson.Value) bool {
		switch {
		case k.Is("endpoint"):
			si.Endpoint, err = str(v, "endpoint")
		case k.Is("id"):
			si.ID, err = str(v, "id")
		case k.Is("tenant_id"):
			si.TenantID, err = str(v, "tenant_id")
		case k.Is("text"):
			si.Text, err = str(v, "text")
		case k.Is("final"):
			var ok bool
			if si.Final, ok = v.Bool(); !ok {
				err = errors.New("map_stream input: final is not a boolean")
			}
		}
		return err == nil
	})
	if err != nil {
		return StreamInput{}, err
	}
	return si, nil
}

func str(v guestjson.Value, name string) (string, error) {
	if !v.IsString() {
		return "", errors.New("map_stream input: " + name + " is not a string")
	}
	return v.Str(), nil
}

// StreamOutput is the output of map_stream: {"emit":"...","hold":"..."}.
type StreamOutput struct {
	Emit string // text to send to the client now
	// Hold is text to keep back, such as the start of a word that the next
	// text may complete; the host prepends it to the next call's Text. The
	// plugin keeps no state between calls: this is where its state goes.
	Hold string
}

// AppendJSON appends the map_stream output.
func (o StreamOutput) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"emit":`...)
	dst = guestjson.AppendString(dst, o.Emit)
	dst = append(dst, `,"hold":`...)
	dst = guestjson.AppendString(dst, o.Hold)
	return append(dst, '}')
}

// isObject reports whether v is a whole object: the guest reader trusts the
// host for validity, but a truncated input, which a hand-made host could
// send, is refused rather than read as less.
func isObject(v guestjson.Value) bool {
	return v.IsObject() && len(v) >= 2 && v[len(v)-1] == '}'
}
