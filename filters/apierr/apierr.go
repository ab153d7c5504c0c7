// Package apierr is the one error type of the chain: an error that knows its
// HTTP status and its OpenAI error type and code. Stages return it (wrapped or
// not) as a plain error; the edge finds it with errors.As and renders it once,
// as a JSON body or as an SSE error event when the stream has started.
package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// OpenAI error types.
const (
	TypeInvalidRequest = "invalid_request_error"
	TypeAuthentication = "authentication_error"
	TypePermission     = "permission_error"
	TypeRateLimit      = "rate_limit_error"
	// TypeInsufficientQuota is OpenAI's type (and code) for an exhausted
	// quota: runedge's budgets (runner/budget).
	TypeInsufficientQuota = "insufficient_quota"
	TypeAPI               = "api_error"
	TypeServer            = "server_error"
)

// Error codes. Each has its row in Catalog (catalog.go), with its status
// and type.
const (
	CodeInvalidBody     = "invalid_body"
	CodeModelNotFound   = "model_not_found"
	CodeInvalidAPIKey   = "invalid_api_key"
	CodeTenantForbidden = "tenant_forbidden"
	CodeBodyTooLarge    = "body_too_large"
	CodeRateLimited     = "rate_limit_exceeded"
	// A budget has no room for the run (usage.budgets): OpenAI's code.
	CodeInsufficientQuota = "insufficient_quota"
	CodeProviderError     = "provider_error"
	CodeTimeout           = "timeout"
	CodeRunCancelled      = "run_cancelled"
	CodeRunWaiting        = "run_waiting"
	CodeRunFailed         = "run_failed"
	CodeUnavailable       = "unavailable"
	CodeNotFound          = "not_found"
	CodeMethodNotAllowed  = "method_not_allowed"
	CodeInvalidHeader     = "invalid_header"
	// A request body sent compressed (Content-Encoding), which runedge
	// does not decode.
	CodeUnsupportedEncoding = "unsupported_content_encoding"
	CodePluginError         = "plugin_error"
	// The Responses API's stateful features (README.md "Responses that remember").
	CodeUnsupportedParameter = "unsupported_parameter"
	CodePreviousNotFound     = "previous_response_not_found"
	CodeItemNotFound         = "item_not_found"
	CodeInvalidSchema        = "invalid_schema"
	// The request body did not arrive within limits.read_body_timeout.
	CodeRequestTimeout = "request_timeout"
	// The admin API and operator page.
	CodeAdminRequired    = "admin_required"
	CodePluginNotTrusted = "plugin_not_trusted"
	CodeNotLoggedIn      = "not_logged_in"
	// An unexpected failure with no run to name: its detail is logged,
	// never sent.
	CodeInternal = "internal_error"
	// A WebSocket of /v1/responses reached its age (websocket.max_age):
	// OpenAI's code, on which its SDKs and Codex reconnect.
	CodeWebSocketLimit = "websocket_connection_limit_reached"
)

// Error is an API error. The zero Param renders as null.
type Error struct {
	Status  int
	Type    string
	Code    string
	Param   string
	Message string
	// RetryAfter, when positive, is sent as the Retry-After header (seconds).
	RetryAfter int
	// Allow is sent as the Allow header on 405.
	Allow string
	// Tokens, when Limit is set, are sent as the x-ratelimit-*-tokens
	// headers (a budget's refusal).
	Tokens RateLimitTokens
	// Err is the cause, kept for logs and errors.Is; never sent to clients.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Message + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// RunErrorCode lets the runner record the code as the run's failure reason.
func (e *Error) RunErrorCode() string { return e.Code }

// Header sets the headers that go with the error.
func (e *Error) Header(h http.Header) {
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	if e.Allow != "" {
		h.Set("Allow", e.Allow)
	}
	e.Tokens.Header(h)
}

// RateLimitTokens are the x-ratelimit-*-tokens headers OpenAI sends: the
// tightest token budget's limit, what is left, and the time until it
// resets (a Go duration, as OpenAI writes it: "6m0s", "1.5s").
type RateLimitTokens struct {
	Limit, Remaining int64
	Reset            time.Duration
}

// Header sets the three headers when a budget applies (Limit > 0).
func (t RateLimitTokens) Header(h http.Header) {
	if t.Limit <= 0 {
		return
	}
	h.Set("X-Ratelimit-Limit-Tokens", strconv.FormatInt(t.Limit, 10))
	h.Set("X-Ratelimit-Remaining-Tokens", strconv.FormatInt(t.Remaining, 10))
	h.Set("X-Ratelimit-Reset-Tokens", max(t.Reset, 0).Round(time.Second).String())
}

// From returns the client's error for err: the *Error in its chain, else
// the runner outcome it wraps (FromRunner: a store outage is 503
// unavailable whichever handler met it), else a 500 internal_error that
// hides the detail of an unexpected error from the client.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if e := FromRunner(err); e != nil {
		return e
	}
	return &Error{Status: http.StatusInternalServerError, Type: TypeServer, Code: CodeInternal,
		Message: "internal error", Err: err}
}

// InvalidBody is a 400 naming the offending field.
func InvalidBody(param, format string, args ...any) *Error {
	return Param(CodeInvalidBody, param, fmt.Sprintf(format, args...))
}

// DuplicateItem is the 400 of an item whose id the conversation already
// holds, in OpenAI's words, naming param (input, or items).
func DuplicateItem(param, id string) *Error {
	return InvalidBody(param, "Duplicate item found with id %s: the conversation already holds it. Remove duplicate items from your input and try again.", id)
}

// InvalidHeader is a 400 naming the offending header.
func InvalidHeader(header, format string, args ...any) *Error {
	return Param(CodeInvalidHeader, header, fmt.Sprintf(format, args...))
}

// NotFound is the 404 for unknown paths and invisible ids alike.
func NotFound(format string, args ...any) *Error {
	return New(CodeNotFound, fmt.Sprintf(format, args...))
}

// Unavailable is a 503 with Retry-After.
func Unavailable(msg string, retryAfter int, cause error) *Error {
	e := New(CodeUnavailable, msg)
	e.RetryAfter, e.Err = retryAfter, cause
	return e
}

// New builds the error of code: its status and type are the catalog's, so
// a code is never sent with another (TestErrorsBuiltFromCodes).
// plugin_error is the 500 of a plugin failing a request; the 422 of a swap
// refused is SwapRefused. A code missing from the catalog is a
// programming error: New panics.
func New(code, msg string) *Error {
	row, ok := byCode[code]
	if !ok {
		panic("apierr: code " + code + " is not in the catalog")
	}
	return &Error{Status: row.Status, Type: row.Type, Code: code, Message: msg}
}

// Param is New naming the offending parameter or header.
func Param(code, param, msg string) *Error {
	e := New(code, msg)
	e.Param = param
	return e
}

// SwapRefused is the 422 plugin_error of a plugin swap whose plugin fails
// its checks (the operator's mistake, not the server's).
func SwapRefused(msg string) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Type: TypeInvalidRequest, Code: CodePluginError, Message: msg}
}

// byCode is the catalog by code; for plugin_error, the later row (500).
var byCode = func() map[string]Entry {
	m := make(map[string]Entry, len(Catalog))
	for _, e := range Catalog {
		m[e.Code] = e
	}
	return m
}()
