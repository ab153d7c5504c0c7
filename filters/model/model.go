// Package model is the second stage of the POST chains: the body must be a
// JSON object of the endpoint's shape, and its model must be the one model
// runedge serves. It reads the body with gjson (no unmarshal) because it runs
// on every request; the mapping plugin does the deep validation.
package model

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/jsondepth"
	"github.com/runedge/runedge/internal/metadata"
)

// ID is the only model runedge serves (contract.ModelID).
const ID = contract.ModelID

// Model is the model stage.
type Model struct{}

var _ filters.Stage = Model{}

// New builds the stage; it has no configuration.
func New() Model { return Model{} }

// Name implements filters.Stage.
func (Model) Name() string { return contract.StageModel }

// Handle implements filters.Stage.
func (Model) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	if len(x.Body) == 0 {
		return apierr.InvalidBody("", "the request body is empty; send a JSON object")
	}
	// The depth, the validity and the top level in one pass; a body it
	// refuses is read again, check by check, for the error that names
	// the fault.
	var f [len(topNames)]gjson.Result
	var k string
	var dup, ok, plain bool
	// A large body gets room for a long string every 512 bytes (an
	// agent's history has one every 570), so that noting them seldom
	// grows the slice; a small one allocates at its first, if any.
	var ends []uint32
	if len(x.Body) >= 16<<10 {
		ends = make([]uint32, 0, 2*(len(x.Body)/512))
	}
	x.SetMembers(func(add func(key, raw string, at int)) bool {
		f, k, dup, ok, plain = readValidTop(x.Body, add, &ends)
		return ok && !dup
	})
	if plain {
		x.SetPlainStrings()
	}
	x.SetStringEnds(ends)
	if !ok {
		// Before anything parses the body (gjson's validator recurses too).
		if err := checkDepth(x.Endpoint, x.Body); err != nil {
			return err
		}
		if !gjson.ValidBytes(x.Body) {
			return apierr.InvalidBody("", "the request body is not valid JSON")
		}
		// Read in place (gjson.ParseBytes copies the body): nothing the stage
		// keeps refers to it, and no stage writes into a body.
		obj := gjson.Parse(unsafe.String(unsafe.SliceData(x.Body), len(x.Body)))
		if !obj.IsObject() {
			return apierr.InvalidBody("", "the request body must be a JSON object")
		}
		f, k, dup = readTop(obj.ForEach)
	}
	// The edge reads the first of two equal keys and a plugin may read the
	// last: the edge would check one "messages" and the agent run another.
	if dup {
		return apierr.InvalidBody(k, "the request body has the key %q twice", k)
	}
	if err := checkModel(f[0]); err != nil {
		return err
	}
	if err := checkShape(x.Endpoint, f[1], f[2], f[3], f[4]); err != nil {
		return err
	}
	if err := metadata.Check(f[5]); err != nil {
		return apierr.InvalidBody("metadata", "%v", err)
	}
	x.Stream = f[1].Bool()
	x.IncludeUsage = x.Stream && f[2].Get("include_usage").Bool()
	if x.Endpoint == filters.Responses && includesReasoning(f[6]) {
		x.TurnOf().IncludeReasoning = true
	}
	return next.Handle(ctx, x)
}

func checkModel(m gjson.Result) error {
	switch {
	case !m.Exists() || m.Type == gjson.Null:
		return apierr.InvalidBody("model", "model is required; use %q", ID)
	case m.Type != gjson.String:
		return apierr.InvalidBody("model", "model must be a string")
	case m.Str != ID:
		return NotFound(m.Str)
	}
	return nil
}

// NotFound is the 404 model_not_found for a model other than ID, named in
// a body or in the path of GET /v1/models/{model}.
func NotFound(name string) *apierr.Error {
	return apierr.Param(apierr.CodeModelNotFound, "model", "the model "+quote(name)+" does not exist; the only model is "+quote(ID))
}

// checkShape checks the fields that decide how the request is handled
// before the plugin runs: the stream flag and the endpoint's input field.
func checkShape(ep filters.Endpoint, s, so, messages, input gjson.Result) error {
	if s.Exists() && s.Type != gjson.True && s.Type != gjson.False && s.Type != gjson.Null {
		return apierr.InvalidBody("stream", "stream must be a boolean")
	}
	if so.Exists() && so.Type != gjson.Null && !so.IsObject() {
		return apierr.InvalidBody("stream_options", "stream_options must be an object")
	}
	switch ep {
	case filters.ChatCompletions:
		if !messages.Exists() {
			return apierr.InvalidBody("messages", "messages is required")
		}
		if !messages.IsArray() || !messages.Get("0").Exists() {
			return apierr.InvalidBody("messages", "messages must be a non-empty array")
		}
	case filters.Responses:
		if !input.Exists() {
			return apierr.InvalidBody("input", "input is required")
		}
		if input.Type != gjson.String && !input.IsArray() {
			return apierr.InvalidBody("input", "input must be a string or an array of input items")
		}
	}
	return nil
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return "'" + s + "'"
}

// topNames are the top-level members the stage reads, in the order of
// readTop's results.
var topNames = [...]string{"model", "stream", "stream_options", "messages", "input", "metadata", "include"}

// includesReasoning reports whether include (a Responses body's) lists
// reasoning.encrypted_content: the turn's reasoning item then carries the
// upstream's reasoning sealed (filters/compaction, filters/translate).
func includesReasoning(include gjson.Result) bool {
	found := false
	include.ForEach(func(_, v gjson.Result) bool {
		found = v.Type == gjson.String && v.Str == "reasoning.encrypted_content"
		return !found
	})
	return found
}

// readTop reads the body's top level (each is its gjson walk): the members named in
// topNames (absent ones are the zero Result, as gjson.Get gives them), and
// a key that appears twice, if any. Keys are compared unescaped
// ("mod\u0065l" is "model"), as gjson.Get matches them. Bodies have a
// handful of top-level keys, so a slice on the stack is searched until it
// is full, then a map takes over.
func readTop(each func(func(k, v gjson.Result) bool)) (fields [len(topNames)]gjson.Result, key string, dup bool) {
	var small [32]string
	seen := small[:0]
	var many map[string]struct{}
	each(func(k, v gjson.Result) bool {
		for i, n := range topNames {
			if k.Str == n {
				fields[i] = v
				break
			}
		}
		if many != nil {
			if _, ok := many[k.Str]; ok {
				key, dup = k.Str, true
				return false
			}
			many[k.Str] = struct{}{}
			return true
		}
		for _, s := range seen {
			if s == k.Str {
				key, dup = k.Str, true
				return false
			}
		}
		if seen = append(seen, k.Str); len(seen) == cap(small) {
			many = make(map[string]struct{}, 2*len(seen))
			for _, s := range seen {
				many[s] = struct{}{}
			}
		}
		return true
	})
	return fields, key, dup
}

// readValidTop is readTop of a body that jsondepth.Valid accepts (valid
// JSON as gjson reads it, nesting no deeper than MaxBodyDepth) and that is
// an object, read in the same pass: each member as gjson's walk gives it,
// in place (a member readTop does not keep is given without its value).
// ok is false for any other body, which the caller reads again check by
// check (FuzzReadValidTopMatchesGjson). add, when not nil, is given each
// member readTop reads, with its key unescaped and its value in place
// (filters.Exchange.SetMembers). plain is jsondepth.ValidPlain's; ends,
// when not nil, gets the ends of the body's long strings
// (jsondepth.ValidPlainEnds) when ok.
func readValidTop(body []byte, add func(key, raw string, at int), ends *[]uint32) (fields [len(topNames)]gjson.Result, key string, dup, ok, plain bool) {
	type span struct{ k, v, kAt, vAt int }
	var small [32]span
	members := small[:0]
	member := func(k, v []byte, kAt, vAt int) bool {
		members = append(members, span{len(k), len(v), kAt, vAt})
		return true
	}
	var valid bool
	if ends != nil {
		valid, plain, *ends = jsondepth.ValidPlainEnds(body, MaxBodyDepth, member, *ends)
	} else {
		valid, plain = jsondepth.ValidPlain(body, MaxBodyDepth, member)
	}
	if !valid {
		return fields, "", false, false, false
	}
	if i := bytes.IndexFunc(body, func(r rune) bool { return r > ' ' }); i < 0 || body[i] != '{' {
		return fields, "", false, false, false
	}
	str := unsafe.String(unsafe.SliceData(body), len(body))
	fields, key, dup = readTop(func(each func(k, v gjson.Result) bool) {
		for _, m := range members {
			lit := str[m.kAt : m.kAt+m.k]
			k := gjson.Result{Type: gjson.String, Raw: lit, Str: lit[1 : len(lit)-1], Index: m.kAt}
			if strings.IndexByte(lit, '\\') >= 0 {
				k.Str = gjson.Parse(lit).Str
			}
			raw := str[m.vAt : m.vAt+m.v]
			if add != nil {
				add(k.Str, raw, m.vAt)
			}
			var v gjson.Result
			if slices.Contains(topNames[:], k.Str) {
				v = gjson.Parse(raw)
				v.Index = m.vAt
			}
			if !each(k, v) {
				return
			}
		}
	})
	return fields, key, dup, true, plain
}
