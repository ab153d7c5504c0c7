package abi

import (
	"errors"

	"github.com/runedge/runedge/plugins/guestjson"
	"github.com/runedge/runedge/runner/native"
)

// Actor is who the request is attributed to.
type Actor struct {
	ID   string
	Type string
	Name string
}

// RequestInput is the input of map_request:
//
//	{"endpoint":"chat.completions","tenant_id":"acme","actor":{"id","type","name"},"body":{...}}
//
// Body is the client's body as it came, JSON the host has checked.
type RequestInput struct {
	Endpoint string
	TenantID string
	Actor    Actor
	Body     []byte
	// PlainStrings is what the host's model stage found of Body: every
	// string ASCII, its escapes one letter other than \/
	// (jsondepth.ValidPlain). It is not part of the input a plugin reads
	// (AppendJSON leaves it out); the host's native default reads it
	// (RequestView.PlainStrings).
	PlainStrings bool
	// StringEnds is where Body's long strings end as the host's model
	// stage found them (jsondepth.ValidPlainEnds: pairs of offsets into
	// Body), nil when unknown. Like PlainStrings it is for the native
	// default only (RequestView.StringEnds).
	StringEnds []uint32
}

// AppendJSON appends the map_request input. The body is spliced in as it is:
// the caller has checked it is JSON.
func (in *RequestInput) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"endpoint":`...)
	dst = guestjson.AppendString(dst, in.Endpoint)
	dst = append(dst, `,"tenant_id":`...)
	dst = guestjson.AppendString(dst, in.TenantID)
	dst = append(dst, `,"actor":`...)
	dst = appendActor(dst, in.Actor)
	dst = append(dst, `,"body":`...)
	if len(in.Body) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, in.Body...)
	}
	return append(dst, '}')
}

// appendActor appends {"id","type","name"}.
func appendActor(dst []byte, a Actor) []byte {
	dst = append(dst, `{"id":`...)
	dst = guestjson.AppendString(dst, a.ID)
	dst = append(dst, `,"type":`...)
	dst = guestjson.AppendString(dst, a.Type)
	dst = append(dst, `,"name":`...)
	dst = guestjson.AppendString(dst, a.Name)
	return append(dst, '}')
}

// RequestView is a map_request input as a guest reads it: each field is the
// JSON value as written, so that a mapping reads the body in place, in the
// same pass (see ResultView).
type RequestView struct {
	Endpoint, TenantID, Actor, Body guestjson.Value
	// PlainStrings is RequestInput.PlainStrings, set by View only (a
	// guest's view of the JSON input has it false).
	PlainStrings bool
	// StringEnds is RequestInput.StringEnds over Body's document, set by
	// View only (nil otherwise): walks of Body jump over the strings it
	// knows (guestjson.StringEnds).
	StringEnds *guestjson.StringEnds
}

// ViewRequestInput reads a map_request input in the guest without
// allocating; the view aliases in. Fields it does not know are ignored, so
// the host may add some.
func ViewRequestInput(in []byte) (RequestView, error) {
	var r RequestView
	v := guestjson.Parse(guestjson.View(in))
	if !isObject(v) {
		return r, errors.New("abi: map_request input is not a JSON object")
	}
	v.Members(r.collect)
	return r, nil
}

func (r *RequestView) collect(k, v guestjson.Value) bool {
	switch {
	case k.Is("endpoint"):
		r.Endpoint = v
	case k.Is("tenant_id"):
		r.TenantID = v
	case k.Is("actor"):
		r.Actor = v
	case k.Is("body"):
		r.Body = v
	}
	return true
}

// ParseRequestInput reads a map_request input in the guest into its typed
// form. Body aliases in: it is valid only while in is.
func ParseRequestInput(in []byte) (RequestInput, error) {
	v, err := ViewRequestInput(in)
	if err != nil {
		return RequestInput{}, err
	}
	r := RequestInput{Endpoint: v.Endpoint.Str(), TenantID: v.TenantID.Str(), Body: v.Body.Bytes()}
	v.Actor.Members(func(k, v guestjson.Value) bool {
		switch {
		case k.Is("id"):
			r.Actor.ID = v.Str()
		case k.Is("type"):
			r.Actor.Type = v.Str()
		case k.Is("name"):
			r.Actor.Name = v.Str()
		}
		return true
	})
	return r, nil
}

// RequestOutput is the output of map_request:
//
//	{"request":{"input":[{"role","content"}...],"instructions",...},"echo":{...}}
//
// Request is the native run request; Echo, optional, is any JSON value the
// host hands back unchanged in the map_result input, for what the reply must
// repeat of the request.
type RequestOutput struct {
	Request native.Request
	Echo    []byte
}
