package apierr

import "net/http"

// Entry is one row of the error catalog: a code, the status and type it is
// always sent with, and when a client gets it.
type Entry struct {
	Status int
	Type   string
	Code   string
	// When says what the client did or what happened (the docs' error
	// table).
	When string
}

// Catalog is every error runedge sends: the one table behind the docs'
// error table (TestDocsErrorTableMatchesCatalog) and the codes above. A
// code has one status and type, except plugin_error: a plugin failing a
// request is the server's fault (500), a plugin an operator tries to swap
// in and that fails its checks is the operator's (422).
var Catalog = []Entry{
	{http.StatusBadRequest, TypeInvalidRequest, CodeInvalidBody, "invalid JSON or body shape (param names the field)"},
	{http.StatusBadRequest, TypeInvalidRequest, CodeInvalidHeader, "malformed header, e.g. an actor header too long or not printable (param names it)"},
	{http.StatusBadRequest, TypeInvalidRequest, CodeUnsupportedParameter, "a parameter that would change the answer but is not supported (param names it)"},
	{http.StatusBadRequest, TypeInvalidRequest, CodePreviousNotFound, "previous_response_id unknown, deleted, not stored, or another tenant's"},
	{http.StatusBadRequest, TypeInvalidRequest, CodeItemNotFound, "an item_reference names no stored item of the tenant"},
	{http.StatusBadRequest, TypeInvalidRequest, CodeInvalidSchema, "a JSON Schema no value can satisfy, or beyond the limits (param names the field)"},
	{http.StatusBadRequest, TypeInvalidRequest, CodeWebSocketLimit, "a WebSocket of /v1/responses reached websocket.max_age or websocket.idle_timeout (an error event, then close code 1000)"},
	{http.StatusUnauthorized, TypeAuthentication, CodeInvalidAPIKey, "missing or invalid bearer token"},
	{http.StatusUnauthorized, TypeAuthentication, CodeNotLoggedIn, "operator page called without a session"},
	{http.StatusForbidden, TypePermission, CodeTenantForbidden, "the token is bound to another tenant"},
	{http.StatusForbidden, TypePermission, CodeAdminRequired, "admin API called with a non-admin token"},
	{http.StatusForbidden, TypePermission, CodePluginNotTrusted, "plugin upload not signed by a key in plugins.trusted_keys"},
	{http.StatusNotFound, TypeInvalidRequest, CodeModelNotFound, "model other than service"},
	{http.StatusNotFound, TypeInvalidRequest, CodeNotFound, "unknown path, or an id not visible to the caller"},
	{http.StatusMethodNotAllowed, TypeInvalidRequest, CodeMethodNotAllowed, "wrong method on a known path (with Allow)"},
	{http.StatusRequestTimeout, TypeInvalidRequest, CodeRequestTimeout, "the body did not arrive within limits.read_body_timeout"},
	{http.StatusConflict, TypeAPI, CodeRunCancelled, "the run was cancelled by someone else"},
	{http.StatusConflict, TypeAPI, CodeRunWaiting, "the run waits for approval or external input"},
	{http.StatusRequestEntityTooLarge, TypeInvalidRequest, CodeBodyTooLarge, "body larger than limits.max_body_bytes"},
	{http.StatusUnsupportedMediaType, TypeInvalidRequest, CodeUnsupportedEncoding, "a compressed body (Content-Encoding)"},
	{http.StatusUnprocessableEntity, TypeInvalidRequest, CodePluginError, "plugin swap refused: it fails to compile, its self-test or verification"},
	{http.StatusTooManyRequests, TypeRateLimit, CodeRateLimited, "rate limited, the tenant at its runs in flight, or the upstream's limit (with Retry-After)"},
	{http.StatusTooManyRequests, TypeInsufficientQuota, CodeInsufficientQuota, "a budget (usage.budgets) has no room for the run; the message names it and when it resets (with x-ratelimit-*-tokens)"},
	{http.StatusInternalServerError, TypeServer, CodeRunFailed, "the run failed on the server, or its end could not be recorded"},
	{http.StatusInternalServerError, TypeServer, CodePluginError, "a plugin trapped, timed out or returned garbage (names the plugin)"},
	{http.StatusInternalServerError, TypeServer, CodeInternal, "an unexpected failure before any run existed (detail in the log only)"},
	{http.StatusBadGateway, TypeAPI, CodeProviderError, "the model provider failed"},
	{http.StatusServiceUnavailable, TypeAPI, CodeUnavailable, "shutting down, at the limit of runs or of request bytes in flight, or the run store cannot be reached, on any endpoint (with Retry-After)"},
	{http.StatusGatewayTimeout, TypeAPI, CodeTimeout, "provider or run timeout"},
}
