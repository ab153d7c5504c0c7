package compat

import (
	"errors"
	"strconv"

	"github.com/tidwall/gjson"
)

// resultInput holds the fields of a MapResult input.
type resultInput struct {
	endpoint, id, messageID, created, model, status gjson.Result
	text, finishReason, usage, echo                 gjson.Result
}

// collect is a gjson.ForEach iterator over the input's top level.
func (r *resultInput) collect(k, v gjson.Result) bool {
	switch k.Str {
	case "endpoint":
		r.endpoint = v
	case "id":
		r.id = v
	case "message_id":
		r.messageID = v
	case "created":
		r.created = v
	case "model":
		r.model = v
	case "status":
		r.status = v
	case "echo":
		r.echo = v
	case "result":
		v.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "text":
				r.text = v
			case "finish_reason":
				r.finishReason = v
			case "usage":
				r.usage = v
			}
			return true
		})
	}
	return true
}

// check refuses an input missing what every reply needs.
func (r *resultInput) check() error {
	if r.id.Type != gjson.String || r.id.Str == "" {
		return errors.New("compat: result input needs a string id")
	}
	if r.model.Type != gjson.String {
		return errors.New("compat: result input needs a string model")
	}
	if r.created.Type != gjson.Number {
		return errors.New("compat: result input needs a numeric created time")
	}
	return nil
}

// finish returns the finish reason, "stop" when the runner gave none.
func (r *resultInput) finish() string {
	if r.finishReason.Type == gjson.String && r.finishReason.Str != "" {
		return r.finishReason.Str
	}
	return "stop"
}

// appendText appends the result text as a JSON string.
func (r *resultInput) appendText(dst []byte) []byte {
	dst = append(dst, '"')
	if r.text.Type == gjson.String {
		dst = appendRawStringBody(dst, r.text.Raw, r.text.Str)
	}
	return append(dst, '"')
}

// appendString appends a string field of the input, re-escaped if needed.
func appendString(dst []byte, s gjson.Result) []byte {
	dst = append(dst, '"')
	dst = appendRawStringBody(dst, s.Raw, s.Str)
	return append(dst, '"')
}

// appendCreated appends the creation time as a whole number of seconds.
func (r *resultInput) appendCreated(dst []byte) []byte {
	return strconv.AppendInt(dst, r.created.Int(), 10)
}
