package config

import "time"

// WebSocket configures the WebSocket mode of /v1/responses (GET upgraded):
// a socket carries many turns, each a run. Every field is live: a reload
// applies to sockets opened after it (the caps count the sockets open now).
type WebSocket struct {
	// MaxAge is how long a socket may live; it then ends with the
	// websocket_connection_limit_reached error event and a normal closure
	// (nil: DefaultWebSocketMaxAge, OpenAI's 60 minutes; 0: no limit).
	MaxAge *Duration `yaml:"max_age"`
	// IdleTimeout ends a socket that has run no turn and received no
	// client event for this long, as MaxAge does (nil:
	// DefaultWebSocketIdle; 0: no limit).
	IdleTimeout *Duration `yaml:"idle_timeout"`
	// PingInterval is how often the host pings a socket; one not answered
	// within it closes the socket (nil: DefaultWebSocketPing; 0: no pings).
	PingInterval *Duration `yaml:"ping_interval"`
	// MaxCachedResponses bounds the store:false responses (and pre-warms)
	// a socket remembers for previous_response_id, oldest out first
	// (0: DefaultWebSocketCached). Their items count against MaxSocketBytes.
	MaxCachedResponses int `yaml:"max_cached_responses"`
	// MaxSockets, MaxSocketsPerTenant and MaxSocketsPerToken cap the open
	// sockets of the host, of one tenant and of one token (0: the
	// defaults). A socket over a cap is refused before the upgrade: 503
	// for the host, 429 for a tenant or token, with Retry-After. The
	// host's cap is lowered further to half the process's descriptor
	// limit (RLIMIT_NOFILE), so that sockets never take the descriptors
	// ordinary requests, /healthz and the admin listener need.
	MaxSockets          int `yaml:"max_sockets"`
	MaxSocketsPerTenant int `yaml:"max_sockets_per_tenant"`
	MaxSocketsPerToken  int `yaml:"max_sockets_per_token"`
	// MaxSocketBytes bounds what one socket keeps between turns and what
	// it has read ahead: its cached responses (by capacity), its spare
	// buffers and the client events waiting behind the turn in flight
	// (0: limits.max_body_bytes × 4).
	MaxSocketBytes int64 `yaml:"max_socket_bytes"`
}

// Defaults of the WebSocket mode.
const (
	DefaultWebSocketMaxAge = 60 * time.Minute
	// DefaultWebSocketIdle is well below the age limit: an idle socket
	// holds a descriptor and its buffers for nothing.
	DefaultWebSocketIdle = 10 * time.Minute
	// DefaultWebSocketPing stays well inside the 60 s idle timeout of
	// common load balancers.
	DefaultWebSocketPing   = 20 * time.Second
	DefaultWebSocketCached = 8
	// DefaultMaxSockets and the per-tenant and per-token defaults: a
	// tenant may hold a quarter of the host's sockets and a token a
	// quarter of its tenant's.
	DefaultMaxSockets          = 1024
	DefaultMaxSocketsPerTenant = 256
	DefaultMaxSocketsPerToken  = 64
)

// Age is websocket.max_age with its default applied; 0: no limit.
func (w WebSocket) Age() time.Duration {
	if w.MaxAge == nil {
		return DefaultWebSocketMaxAge
	}
	return w.MaxAge.Std()
}

// Idle is websocket.idle_timeout with its default applied; 0: no limit.
func (w WebSocket) Idle() time.Duration {
	if w.IdleTimeout == nil {
		return DefaultWebSocketIdle
	}
	return w.IdleTimeout.Std()
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

// Caps are websocket.max_sockets, max_sockets_per_tenant and
// max_sockets_per_token with their defaults applied.
func (w WebSocket) Caps() (host, tenant, token int) {
	host, tenant, token = w.MaxSockets, w.MaxSocketsPerTenant, w.MaxSocketsPerToken
	if host == 0 {
		host = DefaultMaxSockets
	}
	if tenant == 0 {
		tenant = DefaultMaxSocketsPerTenant
	}
	if token == 0 {
		token = DefaultMaxSocketsPerToken
	}
	return host, tenant, token
}

// SocketBytes is websocket.max_socket_bytes with its default applied for
// a body limit of maxBody.
func (w WebSocket) SocketBytes(maxBody int64) int64 {
	if w.MaxSocketBytes == 0 {
		return maxBody * 4
	}
	return w.MaxSocketBytes
}

// validateWebSocket checks the websocket section.
func (c *Config) validateWebSocket(bad func(field, format string, args ...any)) {
	w := c.WebSocket
	if w.MaxAge != nil {
		if msg := w.MaxAge.Check(); msg != "" {
			bad("websocket.max_age", "%s", msg)
		}
	}
	if w.IdleTimeout != nil {
		if msg := w.IdleTimeout.Check(); msg != "" {
			bad("websocket.idle_timeout", "%s", msg)
		} else if d := w.IdleTimeout.Std(); d > 0 && d < 100*time.Millisecond {
			bad("websocket.idle_timeout", "%s is too short (at least 100ms, or 0 to disable)", d)
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
	for _, f := range []struct {
		name string
		v    int
	}{{"websocket.max_sockets", w.MaxSockets}, {"websocket.max_sockets_per_tenant", w.MaxSocketsPerTenant}, {"websocket.max_sockets_per_token", w.MaxSocketsPerToken}} {
		if f.v < 0 {
			bad(f.name, "want 0 (the default) or more, got %d", f.v)
		}
	}
	if w.MaxSocketBytes < 0 {
		bad("websocket.max_socket_bytes", "want 0 (limits.max_body_bytes × 4) or more, got %d", w.MaxSocketBytes)
	} else if w.MaxSocketBytes > 0 && w.MaxSocketBytes < 64<<10 {
		bad("websocket.max_socket_bytes", "%d is too small (at least 65536)", w.MaxSocketBytes)
	}
}
