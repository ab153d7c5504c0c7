package respjson

import (
	"strconv"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/plugins/guestjson"
	"github.com/runedge/runedge/runner/native"
)

// Echo holds a Response's echoed request settings as JSON, indexed as
// contract.ResponseEcho lists them; "" stands for the setting's default.
type Echo [contract.NumEcho]string

// Response is what a Response object says of itself; its output items and
// metadata are the caller's to append between the writer's pieces:
//
//	AppendResponseHead, the output items (comma separated),
//	AppendResponseTail, the metadata object, ResponseEnd
//
// Every key the Open Responses description requires is written, each
// nullable one null when unset, in an order the golden files pin.
type Response struct {
	ID, Model string
	// Status is the Response's status; IncompleteReason its
	// incomplete_details.reason (null when "").
	Status, IncompleteReason string
	// CreatedAt and CompletedAt are Unix seconds; CompletedAt 0 is null.
	CreatedAt, CompletedAt int64
	Echo                   Echo
	// Conversation is {"id"} of the conversation the Response continues,
	// as JSON; left out when "".
	Conversation string
}

// ResponseEnd closes a Response object after its metadata. access_programs
// is required by OpenAI's current description; null: no access program
// applied.
const ResponseEnd = `,"access_programs":null}`

// echoOrder is the order in which a Response shows the echoed settings
// after output_text (instructions, max_output_tokens, user and metadata
// have places of their own).
var echoOrder = [...]int{
	contract.EchoParallelToolCalls, contract.EchoPreviousResponseID, contract.EchoReasoning,
	contract.EchoStore, contract.EchoTemperature, contract.EchoText, contract.EchoToolChoice,
	contract.EchoTools, contract.EchoTopP, contract.EchoTruncation, contract.EchoBackground,
	contract.EchoPresencePenalty, contract.EchoFrequencyPenalty, contract.EchoTopLogprobs,
	contract.EchoMaxToolCalls, contract.EchoServiceTier, contract.EchoSafetyIdentifier,
	contract.EchoPromptCacheKey,
}

// appendEcho appends setting i's JSON, or its default.
func (r *Response) appendEcho(dst []byte, i int) []byte {
	if v := r.Echo[i]; v != "" {
		return append(dst, v...)
	}
	return append(dst, contract.ResponseEcho[i].Default...)
}

// AppendResponseHead appends the Response up to its output items:
// {"id",…,"model",…,"output":[
func AppendResponseHead(dst []byte, r *Response) []byte {
	dst = append(dst, `{"id":`...)
	dst = guestjson.AppendString(dst, r.ID)
	dst = append(dst, `,"object":"response","created_at":`...)
	dst = strconv.AppendInt(dst, r.CreatedAt, 10)
	dst = append(dst, `,"completed_at":`...)
	if r.CompletedAt > 0 {
		dst = strconv.AppendInt(dst, r.CompletedAt, 10)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"status":`...)
	dst = guestjson.AppendString(dst, r.Status)
	dst = append(dst, `,"error":null,"incomplete_details":`...)
	if r.IncompleteReason != "" {
		dst = append(dst, `{"reason":`...)
		dst = guestjson.AppendString(dst, r.IncompleteReason)
		dst = append(dst, '}')
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"instructions":`...)
	dst = r.appendEcho(dst, contract.EchoInstructions)
	dst = append(dst, `,"max_output_tokens":`...)
	dst = r.appendEcho(dst, contract.EchoMaxOutputTokens)
	dst = append(dst, `,"model":`...)
	dst = guestjson.AppendString(dst, r.Model)
	return append(dst, `,"output":[`...)
}

// AppendResponseTail appends what follows the output items up to the
// metadata object: output_text (outputText, a JSON string: the text of the
// message items), the echoed settings, the conversation, usage (null when
// u is nil), user, and "metadata":.
func AppendResponseTail(dst []byte, r *Response, outputText string, u *native.Usage) []byte {
	dst = append(dst, `],"output_text":`...)
	dst = append(dst, outputText...)
	for _, i := range echoOrder {
		dst = append(dst, ',', '"')
		dst = append(dst, contract.ResponseEcho[i].Name...)
		dst = append(dst, '"', ':')
		dst = r.appendEcho(dst, i)
	}
	if r.Conversation != "" {
		dst = append(dst, `,"`+contract.EchoConversation+`":`...)
		dst = append(dst, r.Conversation...)
	}
	dst = append(dst, `,"usage":`...)
	if u == nil {
		dst = append(dst, "null"...)
	} else {
		dst = AppendUsage(dst, *u)
	}
	dst = append(dst, `,"user":`...)
	dst = r.appendEcho(dst, contract.EchoUser)
	return append(dst, `,"metadata":`...)
}

// AppendUsage appends a Response's usage object. Every key is required by
// the Responses descriptions, both details objects included; the details
// are what the upstream reported, 0 when it reported none.
func AppendUsage(dst []byte, u native.Usage) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.InputTokens), 10)
	dst = append(dst, `,"input_tokens_details":{"cached_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.CachedTokens), 10)
	dst = append(dst, `,"cache_write_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.CacheWriteTokens), 10)
	dst = append(dst, `},"output_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.OutputTokens), 10)
	dst = append(dst, `,"output_tokens_details":{"reasoning_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.ReasoningTokens), 10)
	dst = append(dst, `},"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.TotalTokens), 10)
	return append(dst, '}')
}
