package socket

import (
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/plugins/guestjson"
)

// turn is one response.create, made ready for the POST chain.
type turn struct {
	// body is the create body the chain reads: the event without its
	// socket-only fields, with stream on, and, continuing a cached
	// response, with that response's items before the new input.
	body     []byte
	generate bool
	store    bool
	// whole: the event asked for stream:false; its events go out together
	// at the end of the turn (see Writer.whole).
	whole bool
	// input is this event's own input as a JSON array of items.
	input []byte
	// local is the cached response it continues ("" for none) and from
	// its entry.
	local string
	from  *entry
	// stream is its lane (stream_id; "" for none).
	stream string
	// steer, for a response.steer, is the answer to send: nothing runs.
	steer []byte
}

// Client event types.
const (
	eventCreate = "response.create"
	eventSteer  = "response.steer"
)

// parse reads a client event: a response.create, whose fields are those
// of POST /v1/responses (OpenAI's socket sends them at the top level; a
// nested "response" object is read too), or a response.steer, which is
// answered as unsupported (steerRefused).
func parse(msg []byte, cache *Cache) (*turn, *apierr.Error) {
	// Read in place (guestjson.View): msg is the event's own buffer, never
	// written to, so the strings read from it stay valid.
	ev := gjson.Parse(guestjson.View(msg))
	if !gjson.ValidBytes(msg) || !ev.IsObject() {
		return nil, apierr.InvalidBody("", "a client event must be a JSON object")
	}
	typ := ev.Get("type")
	if typ.Str == eventSteer {
		return &turn{steer: steerRefused(ev)}, nil
	}
	if typ.Str != eventCreate {
		return nil, apierr.InvalidBody("type", "unknown client event type %q; the socket takes %q", typ.String(), eventCreate)
	}
	body := ev
	if r := ev.Get("response"); r.IsObject() {
		body = r
	}
	t := &turn{generate: true, store: true}
	// One pass over the fields: read what the socket needs and copy the
	// rest into the chain's body, stream on (a turn is answered by events).
	var e *apierr.Error
	var conv, prev gjson.Result
	b := make([]byte, 0, len(body.Raw)+16)
	b = append(b, '{')
	body.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "type", "generate", "stream_id", "stream_options", "stream":
			if k.Str == "stream_id" {
				if v.Type != gjson.String || !validStreamID(v.Str) {
					e = apierr.InvalidBody("stream_id", "stream_id must be 1 to 256 ASCII letters, digits, underscores, hyphens or periods")
					return false
				}
				t.stream = v.Str
			}
			if k.Str == "generate" {
				if v.Type != gjson.True && v.Type != gjson.False {
					e = apierr.InvalidBody("generate", "generate must be a boolean")
					return false
				}
				t.generate = v.Type == gjson.True
			}
			if k.Str == "stream" {
				t.whole = v.Type == gjson.False
			}
			return true // the socket's own fields
		case "background":
			if v.Type != gjson.False && v.Type != gjson.Null {
				e = apierr.Param(apierr.CodeUnsupportedParameter, "background", "background is not supported over the socket; use POST /v1/responses")
				return false
			}
		case "store":
			t.store = v.Type != gjson.False
		case "input":
			t.input = inputItems(v)
		case "conversation":
			conv = v
		case "previous_response_id":
			prev = v
		}
		b = append(b, k.Raw...)
		b = append(b, ':')
		b = append(b, v.Raw...)
		b = append(b, ',')
		return true
	})
	if e != nil {
		return nil, e
	}
	if t.input == nil {
		t.input = []byte("[]")
	}
	b = append(b, `"stream":true}`...)
	// With a conversation, previous_response_id is left for the chain to
	// refuse (400, as on POST): expanded, it would hide the conflict.
	if prev.Type == gjson.String && (!conv.Exists() || conv.Type == gjson.Null) {
		if e, ok := cache.get(prev.Str); ok {
			t.local, t.from = prev.Str, e
			b, _ = sjson.SetRawBytes(b, "input", joinArrays(e.items, t.input))
			if e.prev != "" {
				b, _ = sjson.SetBytes(b, "previous_response_id", e.prev)
			} else {
				b, _ = sjson.DeleteBytes(b, "previous_response_id")
			}
		}
	}
	t.body = b
	return t, nil
}

// steerRefused is the answer to a response.steer: steering adds input to
// a response while it runs, and a run's input is fixed when it is
// recorded, so the socket cannot honour it. The answer is the
// response.steer.failed event openai-go types, with the code
// steering_not_supported and the input handed back for a response.create.
func steerRefused(ev gjson.Result) []byte {
	b := make([]byte, 0, 320+len(ev.Get("input").Raw))
	b = append(b, `{"type":"response.steer.failed","sequence_number":0,"error":{"type":"invalid_request_error","code":"steering_not_supported","message":"response.steer is not supported: a run's input is fixed when it starts; send the input in a response.create that continues the response (previous_response_id) once it ends"},"steer":{"input":`...)
	if in := ev.Get("input"); in.Exists() {
		b = append(b, in.Raw...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"previous_response_id":`...)
	b = strconv.AppendQuote(b, ev.Get("previous_response_id").String())
	return append(b, "}}"...)
}

// inputItems is input as a JSON array of items: a string is one user
// message, as the Responses API reads it.
func inputItems(in gjson.Result) []byte {
	switch {
	case in.IsArray():
		return []byte(in.Raw)
	case in.Type == gjson.String:
		b, _ := sjson.SetBytes([]byte(`[{"type":"message","role":"user","content":""}]`), "0.content", in.Str)
		return b
	}
	return []byte("[]")
}

// joinArrays concatenates JSON arrays, into a slice of the size it needs:
// the cache counts what it keeps by capacity.
func joinArrays(arrays ...[]byte) []byte {
	n := 2
	for _, a := range arrays {
		n += len(a) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for _, a := range arrays {
		inner := gjson.ParseBytes(a)
		if !inner.IsArray() {
			continue
		}
		raw := a[1 : len(a)-1]
		if len(trimSpace(raw)) == 0 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, raw...)
	}
	return append(out, ']')
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// remember caches the outcome of a turn that ran no chain (a pre-warm;
// a chain's turn is kept by its commit, Request.Remember) from its
// terminal event, or forgets what a failed turn continued (forget).
func (t *turn) remember(cache *Cache, terminal []byte, sessionID, threadID string, failed bool) {
	if failed {
		t.forget(cache)
		return
	}
	if !completed(terminal) {
		return
	}
	t.keep(cache, []byte(gjson.GetBytes(terminal, "response").Raw), sessionID, threadID)
}

// forget evicts the cached response a failed continuation referred to:
// its state may be what made it fail, and the client must start the
// chain again.
func (t *turn) forget(cache *Cache) {
	if t.local != "" {
		cache.remove(t.local)
	}
}

// keep caches a completed turn's Response (object, as the client got
// it) when a later turn on this socket may need it: a store:false
// response or a pre-warm. A stored response is continued from the store
// instead.
func (t *turn) keep(cache *Cache, object []byte, sessionID, threadID string) {
	if t.store && t.generate {
		return
	}
	id := gjson.GetBytes(object, "id").Str
	if id == "" {
		return
	}
	e := &entry{sessionID: sessionID, threadID: threadID}
	var prior []byte
	if t.from != nil {
		prior, e.prev = t.from.items, t.from.prev
		if sessionID == "" {
			e.sessionID, e.threadID = t.from.sessionID, t.from.threadID
		}
	} else if p := gjson.GetBytes(t.body, "previous_response_id"); p.Type == gjson.String {
		e.prev = p.Str // a stored response, which the store replays
	}
	e.items = joinArrays(prior, t.input, []byte(gjson.GetBytes(object, "output").Raw))
	cache.put(id, e)
}
