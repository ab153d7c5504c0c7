package openai

import (
	"encoding/json"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/internal/jsonfast"
)

// Decoding upstream replies: every chunk of a stream and every whole answer
// is read here, so it is on the hot path. encoding/json (reflection, a
// validity scan, then a decoding pass; a deep stack that the run's fresh
// goroutine grows) cost about 5 µs per chunk; jsonfast reads the few
// members the provider needs in one pass over a body gjson validated.
//
// The fast path must read exactly what json.Unmarshal into the wire types
// would. Where it cannot be sure — a member whose name differs from a field's
// only in case (encoding/json matches those), a member given twice (the last
// one wins there), an escaped member name, a value of an unexpected type,
// tool calls — it gives up and the caller unmarshals as before. Invalid JSON
// also goes to json.Unmarshal, for its error message. TestDecodeMatchesJSON
// and FuzzDecodeChunk hold the two paths together.

// decodeChunk decodes a chat.completion.chunk into c, which may hold the
// previous chunk (its choices' slice is reused). The fast path reads data
// in place: the strings it puts in c alias data, valid only until the
// caller reuses data (dispatch copies what it keeps).
func decodeChunk(data []byte, c *wireChunk) error {
	if len(data) > 0 && gjson.ValidBytes(data) {
		choices := c.Choices[:0]
		*c = wireChunk{Choices: choices}
		if fastChunk(jsonfast.Doc(unsafe.String(&data[0], len(data))), c) {
			return nil
		}
	}
	*c = wireChunk{}
	return json.Unmarshal(data, c)
}

// decodeCompletion decodes a whole chat.completion into c. c's texts
// point into data, which the caller must not change after (readWhole's
// body is read for this call alone): a copy of the body as a string was
// an allocation the size of the answer.
func decodeCompletion(data []byte, c *wireCompletion) error {
	if len(data) > 0 && gjson.ValidBytes(data) && fastCompletion(jsonfast.Doc(unsafe.String(&data[0], len(data))), c) {
		return nil
	}
	*c = wireCompletion{}
	return json.Unmarshal(data, c)
}

var (
	chunkNames       = []string{"choices", "usage", "error"}
	chunkChoiceNames = []string{"index", "delta", "finish_reason"}
	deltaNames       = []string{"content", "refusal", "tool_calls", "reasoning_content", "reasoning"}
	choiceNames      = []string{"index", "message", "finish_reason"}
	usageNames       = []string{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details"}
	detailNames      = []string{"cached_tokens", "cache_write_tokens", "reasoning_tokens"}
)

func fastChunk(v jsonfast.Value, c *wireChunk) bool {
	return fastAnswer(v, &c.Choices, &c.Usage, &c.Error, chunkChoiceNames, func(ch *wireChunkChoice) choiceFields {
		return choiceFields{&ch.Index, &ch.Delta.Content, &ch.Delta.Refusal, &ch.FinishReason,
			(*string)(&ch.Delta.ReasoningContent), (*string)(&ch.Delta.Reasoning)}
	})
}

func fastCompletion(v jsonfast.Value, c *wireCompletion) bool {
	return fastAnswer(v, &c.Choices, &c.Usage, &c.Error, choiceNames, func(ch *wireChoice) choiceFields {
		return choiceFields{&ch.Index, &ch.Message.Content, &ch.Message.Refusal, &ch.FinishReason,
			(*string)(&ch.Message.ReasoningContent), (*string)(&ch.Message.Reasoning)}
	})
}

// choiceFields are where a choice's members go: a chunk's choice and a
// whole answer's differ only in the name and type of the object holding
// the text (delta, message).
type choiceFields struct {
	index                    *int
	content, refusal, finish *string
	// reasoning_content and reasoning: a string, anything else ignored
	// (reasoningText).
	reasoningContent, reasoning *string
}

// fastAnswer reads what a chunk and a whole answer share: choices (each an
// index, one object named by choice[1] with content and refusal, and a
// finish_reason), usage, and an error kept raw.
func fastAnswer[C any](v jsonfast.Value, choices *[]C, usage **wireUsage, errRaw *json.RawMessage,
	choice []string, fields func(*C) choiceFields) bool {
	if !v.IsObject() {
		return false
	}
	return jsonfast.Members(v, chunkNames, func(i int, v jsonfast.Value) bool {
		switch i {
		case 0:
			return jsonfast.Array(v, choices, func(v jsonfast.Value, ch *C) bool {
				f := fields(ch)
				return jsonfast.Members(v, choice, func(i int, v jsonfast.Value) bool {
					switch i {
					case 0:
						return jsonfast.Int(v, f.index)
					case 1:
						return jsonfast.Object(v, func(v jsonfast.Value) bool {
							return jsonfast.Members(v, deltaNames, func(i int, v jsonfast.Value) bool {
								switch i {
								case 0:
									return jsonfast.String(v, f.content)
								case 1:
									return jsonfast.String(v, f.refusal)
								case 3:
									return reasoningString(v, f.reasoningContent)
								case 4:
									return reasoningString(v, f.reasoning)
								}
								return jsonfast.Empty(v)
							})
						})
					}
					return jsonfast.String(v, f.finish)
				})
			})
		case 1:
			return fastUsage(v, usage)
		}
		*errRaw = json.RawMessage(v)
		return true
	})
}

func fastUsage(v jsonfast.Value, dst **wireUsage) bool {
	if v.IsNull() {
		*dst = nil
		return true
	}
	if !v.IsObject() {
		return false
	}
	u := new(wireUsage)
	*dst = u
	return jsonfast.Members(v, usageNames, func(i int, v jsonfast.Value) bool {
		switch i {
		case 0:
			return jsonfast.Int(v, &u.PromptTokens)
		case 1:
			return jsonfast.Int(v, &u.CompletionTokens)
		case 2:
			return jsonfast.Int(v, &u.TotalTokens)
		case 3:
			return fastDetails(v, &u.PromptTokensDetails)
		}
		return fastDetails(v, &u.CompletionTokensDetails)
	})
}

// fastDetails reads a usage details object as encoding/json would.
func fastDetails(v jsonfast.Value, dst **wireTokenDetails) bool {
	if v.IsNull() {
		*dst = nil
		return true
	}
	if !v.IsObject() {
		return false
	}
	d := new(wireTokenDetails)
	*dst = d
	return jsonfast.Members(v, detailNames, func(i int, v jsonfast.Value) bool {
		return jsonfast.Int(v, [...]*int{&d.CachedTokens, &d.CacheWriteTokens, &d.ReasoningTokens}[i])
	})
}
