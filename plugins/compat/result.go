package compat

import (
	"errors"
	"strconv"
)

// resultInput holds the fields of a MapResult input.
type resultInput struct {
	endpoint, id, messageID, created, model, status value
	text, finishReason, usage, echo                 value
	sessionID, runID                                value
	toolCalls                                       value
}

// collect is a members callback over the input's top level.
func (r *resultInput) collect(k, v value) bool {
	switch {
	case k.is("endpoint"):
		r.endpoint = v
	case k.is("id"):
		r.id = v
	case k.is("message_id"):
		r.messageID = v
	case k.is("created"):
		r.created = v
	case k.is("model"):
		r.model = v
	case k.is("status"):
		r.status = v
	case k.is("echo"):
		r.echo = v
	case k.is("session_id"):
		r.sessionID = v
	case k.is("run_id"):
		r.runID = v
	case k.is("result"):
		v.members(func(k, v value) bool {
			switch {
			case k.is("text"):
				r.text = v
			case k.is("finish_reason"):
				r.finishReason = v
			case k.is("usage"):
				r.usage = v
			case k.is("tool_calls"):
				r.toolCalls = v
			}
			return true
		})
	}
	return true
}

// check refuses an input missing what every reply needs.
func (r *resultInput) check() error {
	if !r.id.isString() || r.id == `""` {
		return errors.New("compat: result input needs a string id")
	}
	if !r.model.isString() {
		return errors.New("compat: result input needs a string model")
	}
	if _, ok := r.created.num(); !ok {
		return errors.New("compat: result input needs a numeric created time")
	}
	return nil
}

// finish returns the finish reason, "stop" when the runner gave none.
func (r *resultInput) finish() value {
	if r.finishReason.isString() && r.finishReason != `""` {
		return r.finishReason
	}
	return `"stop"`
}

// appendText appends the result text as a JSON string.
func (r *resultInput) appendText(dst []byte) []byte {
	return appendString(dst, r.text)
}

// appendString appends a string value as a JSON string, "" when v is not one.
func appendString(dst []byte, v value) []byte {
	dst = append(dst, '"')
	if v.isString() {
		dst = appendStringValue(dst, v)
	}
	return append(dst, '"')
}

// appendCreated appends the creation time as a whole number of seconds.
func (r *resultInput) appendCreated(dst []byte) []byte {
	f, _ := r.created.num()
	return strconv.AppendInt(dst, int64(f), 10)
}

// readUsage reads the native usage object; a missing total is the sum of the
// parts, so a provider that reports only the parts still yields a
// consistent reply.
func (r *resultInput) readUsage() Usage {
	var u Usage
	total := -1
	r.usage.members(func(k, v value) bool {
		n, _ := v.num()
		switch {
		case k.is("input_tokens"):
			u.InputTokens = int(n)
		case k.is("output_tokens"):
			u.OutputTokens = int(n)
		case k.is("total_tokens"):
			total = int(n)
		}
		return true
	})
	if total < 0 {
		total = u.InputTokens + u.OutputTokens
	}
	u.TotalTokens = total
	return u
}
