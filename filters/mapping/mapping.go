// Package mapping is the map-request stage: a mapping plugin (WebAssembly)
// turns the compatible request body into the native run request.
package mapping

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/internal/lru"
	"github.com/runedge/runedge/internal/mediaurl"
	"github.com/runedge/runedge/plugins/abi"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/schema"
)

// Mapping is the map-request stage.
type Mapping struct {
	plugin filters.Mapper
	hosted Hosted
	media  mediaurl.Policy
	// mapped keeps each conversation's mapped items between its turns
	// (mapConversation).
	mapped *lru.Cache[mappedKey, mappedItems]
	// native: the plugin is the built-in default run in the host
	// (runtime.Plugin.IsNative), whose output is JSON by construction
	// and is decoded without being validated again (decode).
	native bool
}

var _ filters.Stage = (*Mapping)(nil)

// New builds the stage around a loaded plugin (a *runtime.Plugin) that
// exports map_request.
func New(p filters.Mapper) (*Mapping, error) {
	if !p.Has(runtime.MapRequest) {
		return nil, fmt.Errorf("map-request: plugin %s does not export map_request", p.Name())
	}
	n, ok := p.(interface{ IsNative() bool })
	return &Mapping{plugin: p, mapped: lru.New[mappedKey, mappedItems](mappedBytes), native: ok && n.IsNative()}, nil
}

// decode reads a map_request output of the stage's plugin.
func (m *Mapping) decode(out []byte) (abi.RequestOutput, error) {
	if m.native {
		return abi.DecodeNativeRequestOutput(out)
	}
	return abi.DecodeRequestOutput(out)
}

// mapRequest runs map_request on in. The built-in default decodes an
// agent's text history itself (runtime.Plugin.MapRequestNative), and out
// is nil then; otherwise out is the plugin's output, for decode.
func (m *Mapping) mapRequest(ctx context.Context, in *abi.RequestInput) (o abi.RequestOutput, out []byte, err error) {
	if n, ok := m.plugin.(nativeMapper); ok && m.native {
		return n.MapRequestNative(ctx, in)
	}
	out, err = m.plugin.MapRequest(ctx, in)
	return o, out, err
}

// nativeMapper is a plugin that may decode its own map_request output
// (*runtime.Plugin).
type nativeMapper interface {
	MapRequestNative(ctx context.Context, in *abi.RequestInput) (abi.RequestOutput, []byte, error)
}

var _ nativeMapper = (*runtime.Plugin)(nil)

// WithHosted sets what the stage does with withheld hosted tools.
func (m *Mapping) WithHosted(h Hosted) *Mapping {
	m.hosted = h
	return m
}

// WithMedia sets the policy for media URLs (the zero Policy is the
// default: https: and data: only, no private hosts).
func (m *Mapping) WithMedia(p mediaurl.Policy) *Mapping {
	m.media = p
	return m
}

// Name implements filters.Stage.
func (m *Mapping) Name() string { return contract.StageMapRequest }

// Handle implements filters.Stage.
func (m *Mapping) Handle(ctx context.Context, x *filters.Exchange, next filters.Handler) error {
	in := requestInput(x)
	o, out, err := m.mapRequest(ctx, &in)
	if err != nil {
		return filters.PluginError(err)
	}
	if out != nil {
		o, err = m.decode(out)
	}
	if err != nil {
		// A schema nested too deeply for the decoder is the client's
		// mistake, which the run stage (schema.Check) would refuse, but it
		// fails here first: refuse it as the run stage does. Only a failed
		// decode looks for it, so a request's output is read once.
		if s := gjson.GetBytes(out, "request.output_schema"); s.Exists() {
			if err := checkSchemaDepth(x, []byte(s.Raw)); err != nil {
				return err
			}
		}
		return filters.PluginOutputError(m.plugin.Name(), runtime.MapRequest, err)
	}
	if err := checkSchemaDepth(x, o.Request.OutputSchema); err != nil {
		return err
	}
	if err := m.hosted.check(o.Request.WithheldTools); err != nil {
		return err
	}
	if err := checkMedia(m.media, x, o.Request.Input, false); err != nil {
		return err
	}
	x.Native = o.Request
	if x.Turn != nil && x.Turn.Conversation != nil {
		c := x.Turn.Conversation
		// Mapped when the run reads them, inside its admission slot.
		hx := *x
		// The media policy holds for the history too, checked as it is mapped.
		c.Map = func(ctx context.Context, items []json.RawMessage) ([]runner.Message, error) {
			return m.mapConversation(ctx, &hx, c.SessionID, items)
		}
	}
	// The model stage's view of the stream flag is the one the edge acts on.
	x.Native.Stream = x.Stream
	x.Echo = o.Echo
	return next.Handle(ctx, x)
}

// checkSchemaDepth refuses a schema nested deeper than the run stage
// allows, as the run stage would (400 invalid_schema).
func checkSchemaDepth(x *filters.Exchange, raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	if err := schema.CheckDepth(raw); err != nil {
		return apierr.Param(apierr.CodeInvalidSchema, filters.SchemaParam(x.Endpoint), err.Error())
	}
	return nil
}

// requestInput is the map_request input of x. Its body is the client's
// as it came: the model stage checked it is JSON.
func requestInput(x *filters.Exchange) abi.RequestInput {
	return abi.RequestInput{
		Endpoint: string(x.Endpoint),
		TenantID: x.Identity.TenantID,
		Actor:    abi.Actor{ID: x.Identity.Actor.ID, Type: x.Identity.Actor.Type, Name: x.Identity.Actor.Name},
		Body:     x.Body,
		// The model stage's findings hold while x.Body is the body it read.
		PlainStrings: x.PlainStrings(),
		StringEnds:   x.StringEnds(),
	}
}

// mappedBytes bounds what a stage keeps of mapped conversations (about
// the items' bytes), least recently used first out.
const mappedBytes = 16 << 20

// mappedKey names what a conversation's items were mapped for: the
// plugin's input besides the items is the tenant and the actor.
type mappedKey struct {
	tenant, session               string
	actorID, actorType, actorName string
}

// mappedItems is a conversation's items as last mapped and the messages
// they became. Both are shared and never modified: mapConversation returns
// msgs at its full length, so an append copies it.
type mappedItems struct {
	items []json.RawMessage
	// msgs may have room past its length, in an array shared with the
	// entries before it: tail says how much of it is taken.
	msgs []runner.Message
	tail *atomic.Int64
}

// extend returns e's messages followed by more. Its slice's room is used
// when no turn took it yet (the conversation's next turn; of two that
// continue the same turn, the first): what earlier turns got ends where
// their slices end, so writing past e's length changes nothing they read.
// Otherwise the messages are copied into an array with room for about as
// many more, so that a conversation's turns copy its history a number of
// times that grows with the log of its length, not with it.
func (e mappedItems) extend(more []runner.Message) ([]runner.Message, *atomic.Int64) {
	n := len(e.msgs)
	if len(more) == 0 && e.tail != nil {
		return e.msgs, e.tail
	}
	if e.tail != nil && cap(e.msgs)-n >= len(more) && e.tail.CompareAndSwap(int64(n), int64(n+len(more))) {
		return append(e.msgs, more...), e.tail
	}
	out := make([]runner.Message, 0, 2*(n+len(more))+8)
	out = append(append(out, e.msgs...), more...)
	tail := new(atomic.Int64)
	tail.Store(int64(len(out)))
	return out, tail
}

// mapConversation maps a conversation's items (history), checking their
// media. The items a turn gets are those of the turn before and the new
// ones after them: when the items last mapped for the conversation are a
// prefix of items, compared byte for byte, and the new ones start a turn
// (a user message, where history cuts its segments too), only the new
// ones are mapped. The stage is rebuilt with every plugin swap, and the
// cache with it.
func (m *Mapping) mapConversation(ctx context.Context, x *filters.Exchange, session string, items []json.RawMessage) ([]runner.Message, error) {
	a := x.Identity.Actor
	key := mappedKey{x.Identity.TenantID, session, a.ID, a.Type, a.Name}
	var prev mappedItems
	k := 0
	if e, ok := m.mapped.Get(key); ok && len(e.items) <= len(items) &&
		(len(e.items) == len(items) || startsTurn(items[len(e.items)])) && samePrefix(e.items, items) {
		prev, k = e, len(e.items)
	}
	msgs, err := m.history(ctx, x, items[k:])
	if err != nil {
		return nil, err
	}
	if err := checkMedia(m.media, x, msgs, true); err != nil {
		return nil, err
	}
	out, tail := prev.extend(msgs)
	size := 0
	for _, it := range items {
		size += 2*len(it) + 64
	}
	// Neither is copied again: the items are the run service's, read for
	// this turn, and the messages are read only (the run copies them into
	// the agent's input). A copy of a 400-message history is 74 KB, and
	// the collector's work with it grew every turn.
	m.mapped.Put(key, mappedItems{items: items[:len(items):len(items)], msgs: out, tail: tail}, size+(cap(out)-len(out))*int(unsafe.Sizeof(runner.Message{})))
	return out[:len(out):len(out)], nil
}

// samePrefix reports whether items begins with prefix, byte for byte
// (the same bytes, as the run service's cache of a conversation gives
// them, are not compared again).
func samePrefix(prefix, items []json.RawMessage) bool {
	for i, p := range prefix {
		it := items[i]
		if len(p) != len(it) || (len(p) > 0 && &p[0] != &it[0] && !bytes.Equal(p, it)) {
			return false
		}
	}
	return true
}

// historySegment is the most a conversation's items are mapped in one
// map_request call: a conversation may hold up to the history bound
// (limits.history.max_history_bytes, 8 MiB by default), a plugin's input
// is bounded on its own (4 MiB), and a bound the mapping cannot take would
// fail every later turn of the conversation with a plugin error.
const historySegment = 1 << 20

// maxHistoryItem bounds one turn of a conversation mapped alone: a
// segment beyond it would be beyond the plugin's input bound.
const maxHistoryItem = 3 << 20

// history maps a conversation's items (filters/conversation) on their own,
// as the input of a request that has nothing else, so the run can give them
// to the agent without storing them again as the response's input. The
// items are mapped in segments of about historySegment bytes, each ending
// before a user message (the mapping joins an assistant's message, calls
// and reasoning of one turn into one message: a turn is never split).
func (m *Mapping) history(ctx context.Context, x *filters.Exchange, items []json.RawMessage) ([]runner.Message, error) {
	var out []runner.Message
	for start := 0; start < len(items); {
		end, size := start+1, len(items[start])
		for end < len(items) && (size+len(items[end]) <= historySegment || !startsTurn(items[end])) {
			size += len(items[end])
			end++
		}
		if size > maxHistoryItem {
			return nil, apierr.InvalidBody("conversation", "a turn of the conversation holds more than %d bytes, more than the request mapping takes at once", maxHistoryItem)
		}
		msgs, err := m.mapItems(ctx, x, items[start:end])
		if err != nil {
			return nil, err
		}
		out = append(out, msgs...)
		start = end
	}
	return out, nil
}

// startsTurn reports whether a conversation item is a user message, which
// the mapping never joins to what precedes it.
func startsTurn(item json.RawMessage) bool {
	r := gjson.GetManyBytes(item, "type", "role")
	return (r[0].Str == "" || r[0].Str == "message") && r[1].Str == "user"
}

// mapItems maps one segment of a conversation's items.
func (m *Mapping) mapItems(ctx context.Context, x *filters.Exchange, items []json.RawMessage) ([]runner.Message, error) {
	n := 2
	for _, it := range items {
		n += len(it) + 1
	}
	arr := make([]byte, 0, n)
	arr = append(arr, '[')
	for i, it := range items {
		if i > 0 {
			arr = append(arr, ',')
		}
		arr = append(arr, it...)
	}
	arr = append(arr, ']')
	body, err := sjson.SetRawBytes([]byte(`{"model":"service"}`), "input", arr)
	if err != nil {
		return nil, err
	}
	hx := *x
	hx.Body = body
	in := requestInput(&hx)
	out, err := m.plugin.MapRequest(ctx, &in)
	if err != nil {
		return nil, filters.PluginError(err)
	}
	o, err := m.decode(out)
	if err != nil {
		return nil, filters.PluginOutputError(m.plugin.Name(), runtime.MapRequest, err)
	}
	return o.Request.Input, nil
}
