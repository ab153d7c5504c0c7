package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/runedge/runedge/runner"
)

// maxErrorBody is how much of an error reply is read for its message.
const maxErrorBody = 4 << 10

// statusFailure turns a non-2xx reply into a failure: 429 is a rate limit
// that keeps the upstream's Retry-After; 408 and 5xx may pass on retry;
// 401/403 say the key was refused without quoting the reply (OpenAI's
// quotes part of the key); other 4xx are the request's fault and final.
func statusFailure(res *http.Response, apiKey string, now time.Time) *failure {
	status := fmt.Sprintf("%d %s", res.StatusCode, http.StatusText(res.StatusCode))
	code := res.StatusCode
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		if apiKey == "" {
			return providerFailure(false, "refused the request (%s): no API key is configured", status)
		}
		return providerFailure(false, "refused the API key (%s)", status)
	}
	msg := upstreamMessage(res.Body, apiKey)
	after := retryAfter(res.Header, now)
	// The client learns the status class; the upstream's own words may
	// name its internals (hosts, paths), so they go to the log only.
	switch {
	case code == http.StatusTooManyRequests:
		f := &failure{err: &runner.RateLimitError{Seconds: ceilSeconds(after),
			Detail: "openai upstream answered " + status}, retry: true, after: after}
		return f.saying("%s", msg)
	case code == http.StatusRequestTimeout || code >= 500:
		f := providerFailure(true, "answered %s", status).saying("%s", msg)
		f.after = after
		return f
	}
	return providerFailure(false, "rejected the request (%s)", status).saying("%s", msg)
}

// upstreamMessage is the message of an error body, whatever shape the
// upstream uses: OpenAI's {"error":{"message"}}, {"error":"..."} (Ollama),
// {"message"} (vLLM), {"detail"}, or the first line of plain text.
func upstreamMessage(body io.Reader, apiKey string) string {
	b, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(b, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			msg = s
		case v.Message != "":
			msg = v.Message
		case json.Unmarshal(v.Detail, &s) == nil:
			msg = s
		case len(v.Detail) > 0:
			msg = string(v.Detail)
		}
	} else {
		msg, _, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
	}
	return redact(clip(msg, 300), apiKey)
}

// keyLike matches things shaped like API keys, masked or not: an upstream
// that quotes a key in an error must not have it passed on.
var keyLike = regexp.MustCompile(`\b(sk|rk|pk)-[A-Za-z0-9_*.\-]{6,}`)

func redact(s, apiKey string) string {
	if apiKey != "" {
		s = strings.ReplaceAll(s, apiKey, "[redacted]")
	}
	return keyLike.ReplaceAllString(s, "[redacted]")
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// retryAfter reads how long the upstream asked callers to wait: OpenAI's
// retry-after-ms, else Retry-After in seconds or as an HTTP date. 0 when
// absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	const ceiling = 24 * time.Hour
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return min(time.Duration(ms*float64(time.Millisecond)), ceiling)
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s <= 0 {
			return 0
		}
		return min(time.Duration(s)*time.Second, ceiling)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), ceiling)
	}
	return 0
}

// ceilSeconds rounds up, so a client never comes back early.
func ceilSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}
