package abi

import (
	"bytes"

	"github.com/runedge/runedge/plugins/guestjson"
)

// View returns the input as ViewRequestInput reads it from AppendJSON's
// output, without the envelope: the endpoint, tenant and actor encoded as
// AppendJSON encodes them into buf (reused when it has room), and the body
// as it is, not copied (space around it trimmed, "null" when empty). The
// view aliases both buf and in.Body. A mapping that runs in the host (the
// built-in default, runtime.NativeHooks.MapRequestView) takes this view
// directly: the body is neither copied into an envelope nor skipped over
// once before it is read (RATIONALE.md "The native default without the
// envelope"). TestRequestViewIsTheParsedEnvelope holds the two forms equal.
func (in *RequestInput) View(buf []byte) (RequestView, []byte) {
	w := viewWriter{buf: buf[:0]}
	if need := 96 + 2*(len(in.Endpoint)+len(in.TenantID)+len(in.Actor.ID)+len(in.Actor.Type)+len(in.Actor.Name)); cap(w.buf) < need {
		w.buf = make([]byte, 0, need)
	}
	w.str(rEndpoint, in.Endpoint)
	w.str(rTenant, in.TenantID)
	a := len(w.buf)
	w.buf = appendActor(w.buf, in.Actor)
	w.at[rActor] = span{a, len(w.buf)}
	body := guestjson.Value("null")
	if b := bytes.TrimSpace(in.Body); len(b) > 0 {
		body = guestjson.Value(guestjson.View(b))
	}
	// Slice only now: the buffer may have moved while it grew.
	return RequestView{Endpoint: w.value(rEndpoint), TenantID: w.value(rTenant), Actor: w.value(rActor), Body: body,
		PlainStrings: in.PlainStrings, StringEnds: guestjson.NewStringEnds(in.Body, in.StringEnds)}, w.buf
}

// The fields of a RequestView that View encodes (viewWriter's slots).
const (
	rEndpoint = iota
	rTenant
	rActor
)
