package abi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/internal/jsonfast"
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
}

// AppendJSON appends the map_request input. The body is spliced in as it is:
// the caller has checked it is JSON.
func (in *RequestInput) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"endpoint":`...)
	dst = guestjson.AppendString(dst, in.Endpoint)
	dst = append(dst, `,"tenant_id":`...)
	dst = guestjson.AppendString(dst, in.TenantID)
	dst = append(dst, `,"actor":{"id":`...)
	dst = guestjson.AppendString(dst, in.Actor.ID)
	dst = append(dst, `,"type":`...)
	dst = guestjson.AppendString(dst, in.Actor.Type)
	dst = append(dst, `,"name":`...)
	dst = guestjson.AppendString(dst, in.Actor.Name)
	dst = append(dst, `},"body":`...)
	if len(in.Body) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, in.Body...)
	}
	return append(dst, '}')
}

// RequestView is a map_request input as a guest reads it: each field is the
// JSON value as written, so that a mapping reads the body in place, in the
// same pass (see ResultView).
type RequestView struct {
	Endpoint, TenantID, Actor, Body guestjson.Value
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

// DecodeRequestOutput reads a map_request output on the host. It refuses
// what the run cannot use: no request object, a request that does not
// decode into the native form, no input messages. The echo is compacted.
func DecodeRequestOutput(out []byte) (RequestOutput, error) {
	if !gjson.ValidBytes(out) {
		return RequestOutput{}, errors.New("its output is not JSON")
	}
	req := gjson.GetBytes(out, "request")
	if !req.IsObject() {
		return RequestOutput{}, errors.New("its output has no request object")
	}
	var o RequestOutput
	if !fastRequest(req, &o.Request) {
		o.Request = native.Request{}
		if err := json.Unmarshal([]byte(req.Raw), &o.Request); err != nil {
			return RequestOutput{}, fmt.Errorf("its request object does not decode: %w", err)
		}
	}
	if len(o.Request.Input) == 0 {
		return RequestOutput{}, errors.New("its request has no input messages")
	}
	if len(o.Request.OutputSchema) > 0 {
		o.Request.OutputSchema = compact(o.Request.OutputSchema)
	}
	if e := gjson.GetBytes(out, "echo"); e.Exists() {
		o.Echo = compact([]byte(e.Raw))
	}
	return o, nil
}

// compact returns valid JSON raw without insignificant white space.
func compact(raw []byte) []byte {
	if !bytes.ContainsAny(raw, " \t\r\n") {
		return raw
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// The native request's members as encoding/json names them; fastRequest
// reads the plain ones and leaves the rest (a schema, tools) to
// encoding/json, which reading every request with cost about 10 µs.
var (
	requestNames = []string{"input", "instructions", "schema_name", "json_object", "stream", "max_output_tokens",
		"previous_response_id", "no_store", "background",
		"output_schema", "tools", "tool_choice", "parallel_tool_calls"}
	messageNames = []string{"role", "content", "ref", "ref_index", "tool_call_id", "tool_calls"}
)

// fastRequest decodes a native request as json.Unmarshal would, or reports
// false when it cannot be sure (jsonfast); r may then hold part of it.
func fastRequest(v gjson.Result, r *native.Request) bool {
	return jsonfast.Members(v, requestNames, func(i int, v gjson.Result) bool {
		switch i {
		case 0:
			return jsonfast.Array(v, &r.Input, func(v gjson.Result, m *native.Message) bool {
				return jsonfast.Members(v, messageNames, func(i int, v gjson.Result) bool {
					switch i {
					case 0:
						return jsonfast.String(v, &m.Role)
					case 1:
						return jsonfast.String(v, &m.Content)
					case 2:
						return jsonfast.String(v, &m.Ref)
					case 3:
						return jsonfast.Int(v, &m.RefIndex)
					case 4:
						return jsonfast.String(v, &m.ToolCallID)
					}
					return jsonfast.Empty(v)
				})
			})
		case 1:
			return jsonfast.String(v, &r.Instructions)
		case 2:
			return jsonfast.String(v, &r.SchemaName)
		case 3:
			return jsonfast.Bool(v, &r.JSONObject)
		case 4:
			return jsonfast.Bool(v, &r.Stream)
		case 5:
			return jsonfast.Int(v, &r.MaxOutputTokens)
		case 6:
			return jsonfast.String(v, &r.PreviousResponseID)
		case 7:
			return jsonfast.Bool(v, &r.NoStore)
		case 8:
			return jsonfast.Bool(v, &r.Background)
		}
		return false // schemas, tools: encoding/json
	})
}
