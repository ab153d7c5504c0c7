package config

import "time"

// WebSocket configures the WebSocket mode of /v1/responses (GET upgraded):
// a socket carries many turns, each a run.
type WebSocket struct {
	// MaxAge is how long a socket may live; it then ends with the
	// websocket_connection_limit_reached error event and a normal closure
	// (nil: DefaultWebSocketMaxAge, OpenAI's 60 minutes; 0: no limit).
	MaxAge *Duration `yaml:"max_age"`
	// PingInterval is how often the host pings a socket; one not answered
	// within it closes the socket (nil: DefaultWebSocketPing; 0: no pings).
	PingInterval *Duration `yaml:"ping_interval"`
	// MaxCachedResponses bounds the store:false responses (and pre-warms)
	// a socket remembers for previous_response_id, oldest out first
	// (0: DefaultWebSocketCached). Their items are bounded in all by
	// limits.max_body_bytes × 4.
	MaxCachedResponses int `yaml:"max_cached_responses"`
}

// Defaults of the WebSocket mode.
const (
	DefaultWebSocketMaxAge = 60 * time.Minute
	// DefaultWebSocketPing stays well inside the 60 s idle timeout of
	// common load balancers.
	DefaultWebSocketPing   = 20 * time.Second
	DefaultWebSocketCached = 8
)

// Age is websocket.max_age with its default applied; 0: no limit.
func (w WebSocket) Age() time.Duration {
	if w.MaxAge == nil {
		return DefaultWebSocketMaxAge
	}
	return w.MaxAge.Std()
}

// Ping is websocket.ping_interval with its default applied; 0: no pings.
func (w WebSocket) Ping() time.Duration {
	if w.PingInterval == nil {
		return DefaultWebSocketPing
	}
	return w.PingInterval.Std()
}

// Cached is websocket.max_cached_responses with its default applied.
func (w WebSocket) Cached() int {
	if w.MaxCachedResponses == 0 {
		return DefaultWebSocketCached
	}
	return w.MaxCachedResponses
}

// validateWebSocket checks the websocket section.
func (c *Config) validateWebSocket(bad func(field, format string, args ...any)) {
	w := c.WebSocket
	if w.MaxAge != nil {
		if msg := w.MaxAge.Check(); msg != "" {
			bad("websocket.max_age", "%s", msg)
		}
	}
	if w.PingInterval != nil {
		if msg := w.PingInterval.Check(); msg != "" {
			bad("websocket.ping_interval", "%s", msg)
		} else if d := w.PingInterval.Std(); d > 0 && d < 100*time.Millisecond {
			bad("websocket.ping_interval", "%s is too short (at least 100ms, or 0 to disable)", d)
		}
	}
	if w.MaxCachedResponses < 0 || w.MaxCachedResponses > 1024 {
		bad("websocket.max_cached_responses", "want 0 (default %d) to 1024, got %d", DefaultWebSocketCached, w.MaxCachedResponses)
	}
}
