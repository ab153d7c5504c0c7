// Package httproute is the one table of runedge's HTTP routes: for each
// path pattern, the methods it serves and the operation (handler) each runs,
// the endpoint label its requests carry in the metrics and the access log,
// and whether Envoy routes it. The host's router, its telemetry and the
// Envoy route test all read this table, so a route cannot be served yet
// labelled "unknown", or labelled yet not routed by Envoy.
//
// The package holds data only and imports nothing of runedge but the
// endpoint names (internal/contract), which its labels are: the host
// maps each Op to its handler, the control plane checks its routes against
// Exposure.
package httproute

import "github.com/runedge/runedge/internal/contract"

// Op names the handler a method of a route runs. The host maps every Op to
// one handler and refuses to start with one it does not know.
type Op string

// The operations.
const (
	Models          Op = contract.EndpointModels    // the model list and one model
	ChatCompletions Op = contract.EndpointChat      // POST /v1/chat/completions
	Responses       Op = contract.EndpointResponses // POST /v1/responses
	ResponsesSocket Op = "responses.socket"         // GET /v1/responses upgraded to a WebSocket
	CompactResponse Op = contract.EndpointCompact   // POST /v1/responses/compact
	ListRuns        Op = "runs.list"
	StartRun        Op = "runs.start" // POST /runner/v1/runs
	GetRun          Op = "runs.get"
	CancelRun       Op = "runs.cancel"
	RunEvents       Op = "runs.events"
	Usage           Op = "usage.get"     // GET /runner/v1/usage: the ledger summed
	GetResponse     Op = "responses.get" // and stream resumption (?stream=true)
	DeleteResponse  Op = "responses.delete"
	ListInputItems  Op = "responses.input_items"
	CancelResponse  Op = "responses.cancel"
	InputTokens     Op = contract.EndpointInputTokens // counts a request's input; creates no run
	// The Conversations API (a conversation is a session).
	CreateConversation     Op = "conversations.create"
	GetConversation        Op = "conversations.get"
	UpdateConversation     Op = "conversations.update"
	DeleteConversation     Op = "conversations.delete"
	AddConversationItems   Op = "conversations.items.create"
	ListConversationItems  Op = "conversations.items.list"
	GetConversationItem    Op = "conversations.items.get"
	DeleteConversationItem Op = "conversations.items.delete"
	Health                 Op = "healthz"
)

// Exposure says who can reach a route through Envoy.
type Exposure int

const (
	// Public routes are routed on every Envoy listener.
	Public Exposure = iota
	// Native routes (the native run API) are routed only on a listener
	// whose gateway entry asks for them (native_api: true).
	Native
	// HostOnly routes are the host's own (the health check): Envoy answers
	// them 404.
	HostOnly
)

// AnyMethod in a route's Methods serves every method with one handler (no
// 405).
const AnyMethod = ""

// Method is one method of a route and the operation that serves it.
type Method struct {
	Method string
	Op     Op
}

// Route is one path pattern (net/http ServeMux syntax, without a method).
type Route struct {
	Pattern string
	Methods []Method
	// Label is the endpoint label of its requests' metrics and access log
	// lines: bounded, never the path (paths carry ids).
	Label    string
	Exposure Exposure
	// Upgrade is the operation a GET asking for a WebSocket upgrade runs
	// ("" for none). It is not in Methods: a plain GET keeps its 405.
	Upgrade Op
}

// Endpoint labels. Chat and Responses label the generation endpoints,
// whose request durations are measured.
const (
	LabelModels         = contract.EndpointModels
	LabelChat           = contract.EndpointChat
	LabelResponses      = contract.EndpointResponses
	LabelCompact        = contract.EndpointCompact
	LabelStoredResponse = "responses.stored"
	LabelInputItems     = "responses.input_items"
	LabelCancelResponse = "responses.cancel"
	LabelInputTokens    = contract.EndpointInputTokens
	LabelConversations  = contract.EndpointConversations
	LabelRunner         = contract.EndpointNative
	LabelHealth         = "healthz"
	// LabelUnknown labels every request that matched no route.
	LabelUnknown = "unknown"
)

// Table is every route runedge serves on its API listener.
var Table = []Route{
	{"/v1/models", []Method{{"GET", Models}}, LabelModels, Public, ""},
	{"/v1/models/{model}", []Method{{"GET", Models}}, LabelModels, Public, ""},
	{"/v1/chat/completions", []Method{{"POST", ChatCompletions}}, LabelChat, Public, ""},
	{"/v1/responses", []Method{{"POST", Responses}}, LabelResponses, Public, ResponsesSocket},
	// A literal segment is more specific than {id}: compact is routed
	// here, never read as a response id.
	{"/v1/responses/compact", []Method{{"POST", CompactResponse}}, LabelCompact, Public, ""},
	{"/v1/responses/{id}", []Method{{"GET", GetResponse}, {"DELETE", DeleteResponse}}, LabelStoredResponse, Public, ""},
	{"/v1/responses/{id}/input_items", []Method{{"GET", ListInputItems}}, LabelInputItems, Public, ""},
	{"/v1/responses/input_tokens", []Method{{"POST", InputTokens}}, LabelInputTokens, Public, ""},
	{"/v1/responses/{id}/cancel", []Method{{"POST", CancelResponse}}, LabelCancelResponse, Public, ""},
	{"/v1/conversations", []Method{{"POST", CreateConversation}}, LabelConversations, Public, ""},
	{"/v1/conversations/{id}", []Method{{"GET", GetConversation}, {"POST", UpdateConversation}, {"DELETE", DeleteConversation}}, LabelConversations, Public, ""},
	{"/v1/conversations/{id}/items", []Method{{"GET", ListConversationItems}, {"POST", AddConversationItems}}, LabelConversations, Public, ""},
	{"/v1/conversations/{id}/items/{item_id}", []Method{{"GET", GetConversationItem}, {"DELETE", DeleteConversationItem}}, LabelConversations, Public, ""},
	{"/runner/v1/runs", []Method{{"GET", ListRuns}, {"POST", StartRun}}, LabelRunner, Native, ""},
	{"/runner/v1/runs/{id}", []Method{{"GET", GetRun}}, LabelRunner, Native, ""},
	{"/runner/v1/runs/{id}/cancel", []Method{{"POST", CancelRun}}, LabelRunner, Native, ""},
	{"/runner/v1/runs/{id}/events", []Method{{"GET", RunEvents}}, LabelRunner, Native, ""},
	{"/runner/v1/usage", []Method{{"GET", Usage}}, LabelRunner, Native, ""},
	{"/healthz", []Method{{AnyMethod, Health}}, LabelHealth, HostOnly, ""},
}

var labels = func() map[string]string {
	m := make(map[string]string, len(Table))
	for _, r := range Table {
		m[r.Pattern] = r.Label
	}
	return m
}()

// Label returns the endpoint label of the route whose pattern a request
// matched (http.Request.Pattern), LabelUnknown for none.
func Label(pattern string) string {
	if l, ok := labels[pattern]; ok {
		return l
	}
	return LabelUnknown
}
