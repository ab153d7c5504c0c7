package openai

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Decoding upstream replies: every chunk of a stream and every whole answer
// is read here, so it is on the hot path. encoding/json (reflection, a
// validity scan, then a decoding pass; a deep stack that the run's fresh
// goroutine grows) cost about 5 µs per chunk; gjson reads the few members
// the provider needs in one pass over a validated body.
//
// The fast path must read exactly what json.Unmarshal into the wire types
// would. Where it cannot be sure — a member whose name differs from a field's
// only in case (encoding/json matches those), a member given twice (the last
// one wins there), an escaped member name, a value of an unexpected type,
// tool calls — it gives up and the caller unmarshals as before. Invalid JSON
// also goes to json.Unmarshal, for its error message. TestDecodeMatchesJSON
// and FuzzDecodeChunk hold the two paths together.

// decodeChunk decodes a chat.completion.chunk into c.
func decodeChunk(data []byte, c *wireChunk) error {
	if gjson.ValidBytes(data) && fastChunk(gjson.Parse(string(data)), c) {
		return nil
	}
	*c = wireChunk{}
	return json.Unmarshal(data, c)
}

// decodeCompletion decodes a whole chat.completion into c.
func decodeCompletion(data []byte, c *wireCompletion) error {
	if gjson.ValidBytes(data) && fastCompletion(gjson.Parse(string(data)), c) {
		return nil
	}
	*c = wireCompletion{}
	return json.Unmarshal(data, c)
}

var (
	chunkNames       = []string{"choices", "usage", "error"}
	chunkChoiceNames = []string{"index", "delta", "finish_reason"}
	deltaNames       = []string{"content", "refusal", "tool_calls"}
	choiceNames      = []string{"index", "message", "finish_reason"}
	usageNames       = []string{"prompt_tokens", "completion_tokens", "total_tokens"}
)

func fastChunk(v gjson.Result, c *wireChunk) bool {
	if !v.IsObject() {
		return false
	}
	return members(v, chunkNames, func(i int, v gjson.Result) bool {
		switch i {
		case 0:
			return fastArray(v, &c.Choices, func(v gjson.Result, ch *wireChunkChoice) bool {
				return members(v, chunkChoiceNames, func(i int, v gjson.Result) bool {
					switch i {
					case 0:
						return fastInt(v, &ch.Index)
					case 1:
						return fastObject(v, func(v gjson.Result) bool {
							return members(v, deltaNames, func(i int, v gjson.Result) bool {
								switch i {
								case 0:
									return fastString(v, &ch.Delta.Content)
								case 1:
									return fastString(v, &ch.Delta.Refusal)
								}
								return noCalls(v)
							})
						})
					}
					return fastString(v, &ch.FinishReason)
				})
			})
		case 1:
			return fastUsage(v, &c.Usage)
		}
		c.Error = json.RawMessage(v.Raw)
		return true
	})
}

func fastCompletion(v gjson.Result, c *wireCompletion) bool {
	if !v.IsObject() {
		return false
	}
	return members(v, chunkNames, func(i int, v gjson.Result) bool {
		switch i {
		case 0:
			return fastArray(v, &c.Choices, func(v gjson.Result, ch *wireChoice) bool {
				return members(v, choiceNames, func(i int, v gjson.Result) bool {
					switch i {
					case 0:
						return fastInt(v, &ch.Index)
					case 1:
						return fastObject(v, func(v gjson.Result) bool {
							return members(v, deltaNames, func(i int, v gjson.Result) bool {
								switch i {
								case 0:
									return fastString(v, &ch.Message.Content)
								case 1:
									return fastString(v, &ch.Message.Refusal)
								}
								return noCalls(v)
							})
						})
					}
					return fastString(v, &ch.FinishReason)
				})
			})
		case 1:
			return fastUsage(v, &c.Usage)
		}
		c.Error = json.RawMessage(v.Raw)
		return true
	})
}

// members calls fn with the index in names of each member of object v that
// names a field, and reports false (unsure) for a member encoding/json
// would read differently: an escaped name, a name that matches a field
// only without regard to case, a field given twice.
func members(v gjson.Result, names []string, fn func(i int, v gjson.Result) bool) bool {
	ok := true
	var seen uint32
	v.ForEach(func(k, v gjson.Result) bool {
		if strings.IndexByte(k.Raw, '\\') >= 0 {
			ok = false
			return false
		}
		for i, n := range names {
			if k.Str == n {
				if seen&(1<<i) != 0 {
					ok = false
					return false
				}
				seen |= 1 << i
				ok = fn(i, v)
				return ok
			}
			if strings.EqualFold(k.Str, n) {
				ok = false
				return false
			}
		}
		return true
	})
	return ok
}

// fastObject calls fn on an object; null leaves the field as it is.
func fastObject(v gjson.Result, fn func(gjson.Result) bool) bool {
	switch {
	case v.Type == gjson.Null:
		return true
	case v.IsObject():
		return fn(v)
	}
	return false
}

// fastArray reads an array of objects into *dst; null leaves it nil.
func fastArray[T any](v gjson.Result, dst *[]T, fn func(gjson.Result, *T) bool) bool {
	if v.Type == gjson.Null {
		return true
	}
	if !v.IsArray() {
		return false
	}
	ok := true
	out := make([]T, 0, 1)
	v.ForEach(func(_, e gjson.Result) bool {
		if !e.IsObject() {
			ok = false
			return false
		}
		out = append(out, *new(T))
		ok = fn(e, &out[len(out)-1])
		return ok
	})
	*dst = out
	return ok
}

// fastString reads a string; null leaves it empty. A string with escapes
// or bytes that are not UTF-8 is decoded by encoding/json, which replaces
// what is invalid as it always did.
func fastString(v gjson.Result, dst *string) bool {
	switch v.Type {
	case gjson.Null:
		return true
	case gjson.String:
	default:
		return false
	}
	raw := v.Raw[1 : len(v.Raw)-1]
	if strings.IndexByte(raw, '\\') < 0 && utf8.ValidString(raw) {
		*dst = raw
		return true
	}
	return json.Unmarshal([]byte(v.Raw), dst) == nil
}

// fastInt reads an integer written without fraction or exponent, small
// enough for any int; null leaves it 0.
func fastInt(v gjson.Result, dst *int) bool {
	if v.Type == gjson.Null {
		return true
	}
	raw := v.Raw
	if v.Type != gjson.Number || len(raw) > 18 {
		return false
	}
	n, neg := 0, false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '-' && i == 0:
			neg = true
		case c >= '0' && c <= '9':
			n = n*10 + int(c-'0')
		default:
			return false
		}
	}
	if neg {
		n = -n
	}
	*dst = n
	return true
}

func fastUsage(v gjson.Result, dst **wireUsage) bool {
	if v.Type == gjson.Null {
		*dst = nil
		return true
	}
	if !v.IsObject() {
		return false
	}
	u := new(wireUsage)
	*dst = u
	return members(v, usageNames, func(i int, v gjson.Result) bool {
		switch i {
		case 0:
			return fastInt(v, &u.PromptTokens)
		case 1:
			return fastInt(v, &u.CompletionTokens)
		}
		return fastInt(v, &u.TotalTokens)
	})
}

// noCalls accepts tool_calls that are absent in effect (null or []); calls
// themselves are rare enough to leave to encoding/json.
func noCalls(v gjson.Result) bool {
	return v.Type == gjson.Null || (v.IsArray() && len(v.Array()) == 0)
}
