// Package config loads and validates runedge's YAML configuration. Loading
// is separate from the running chain: a Config is a plain value, checked in
// full before anything is built from it, so a bad file is refused at start
// (or, later, on reload) with a message that names the field.
package config

import (
	"os"
	"time"

	"github.com/runedge/runedge/internal/contract"
)

// Config is the whole configuration file.
type Config struct {
	// Listen is the address of the HTTP server.
	Listen   string           `yaml:"listen"`
	Host     Host             `yaml:"host"`
	Tokens   []Token          `yaml:"tokens"`
	Actors   Actors           `yaml:"actors"`
	Limits   Limits           `yaml:"limits"`
	Store    Store            `yaml:"store"`
	Provider Provider         `yaml:"provider"`
	Plugins  Plugins          `yaml:"plugins"`
	Admin    Admin            `yaml:"admin"`
	Chains   map[string]Chain `yaml:"chains"`
	Tools    Tools            `yaml:"tools"`   // see tools.go
	Log      Log              `yaml:"log"`     // see observe.go
	Metrics  Metrics          `yaml:"metrics"` // see observe.go
	Tracing  Tracing          `yaml:"tracing"` // see tracing.go
	// WebSocket is the WebSocket mode of /v1/responses; see websocket.go.
	WebSocket WebSocket `yaml:"websocket"`
	// Compaction: the keys of compaction items (compaction.go).
	Compaction Compaction `yaml:"compaction"`
	// Dir is the directory relative paths are resolved against: the
	// config file's, or the working directory without a file.
	Dir string `yaml:"-"`
}

// Token is a bearer token, stored as a hash ("sha256:<hex>"; see
// `runedge token hash`).
type Token struct {
	Name   string `yaml:"name"`
	Hash   string `yaml:"hash"`
	Tenant string `yaml:"tenant"`
	Admin  bool   `yaml:"admin"`
}

// Actors is the attribution policy.
type Actors struct {
	// Missing is what happens without actor headers: "token" attributes the
	// request to the token (actor type service), "require" refuses it.
	Missing string `yaml:"missing"`
	// DefaultTenant is the tenant of an unbound token that sends no
	// x-service-tenant-id.
	DefaultTenant string `yaml:"default_tenant"`
}

// Limits bound the work a request may cause.
type Limits struct {
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxInFlight bounds the runs in flight on this host (0: the default,
	// DefaultMaxInFlight; there is no unbounded setting).
	MaxInFlight   int      `yaml:"max_in_flight"`
	RunTimeout    Duration `yaml:"run_timeout"`
	ShutdownGrace Duration `yaml:"shutdown_grace"`
	RatePerSecond float64  `yaml:"rate_per_second"`
	Burst         int      `yaml:"burst"`
	// TenantRatePerSecond and TenantBurst limit each tenant, whatever
	// token it comes with (0: the token's figures).
	TenantRatePerSecond float64 `yaml:"tenant_rate_per_second"`
	TenantBurst         int     `yaml:"tenant_burst"`
	// MaxInFlightPerTenant bounds one tenant's runs in flight, so that
	// it cannot take every max_in_flight slot (0: half of max_in_flight).
	MaxInFlightPerTenant int `yaml:"max_in_flight_per_tenant"`
	// MaxInFlightPerToken bounds the runs in flight of one token, whatever
	// tenants it names: an unbound token cannot escape the tenant bound
	// by naming a fresh tenant for each run (0: half of max_in_flight).
	MaxInFlightPerToken int `yaml:"max_in_flight_per_token"`
	// MaxBackground bounds the background runs in flight on this host
	// (responses with background: true), which hold memory with no
	// connection open; they count against the other bounds too (0: the
	// default).
	MaxBackground int `yaml:"max_background"`
	// WriteTimeout bounds each write to a client: one that stops reading
	// for longer is cut off and its run recorded cancelled/client_stalled.
	WriteTimeout Duration `yaml:"write_timeout"`
	// ReadHeaderTimeout and ReadBodyTimeout bound reading a request's
	// headers and its whole body, on both listeners.
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"`
	ReadBodyTimeout   Duration `yaml:"read_body_timeout"`
	// MaxAdminBodyBytes bounds an upload to the admin API (a plugin).
	MaxAdminBodyBytes int64 `yaml:"max_admin_body_bytes"`
	// SSEKeepalive is how often a stream that has nothing to send writes a
	// ": keepalive" comment (nil: DefaultSSEKeepalive; 0 disables).
	SSEKeepalive *Duration `yaml:"sse_keepalive"`
	// History bounds references, replayed turns, stored stream events and
	// stream readers (history.go).
	History History `yaml:"history"`
}

// Host identifies this runedge process among the hosts sharing a store.
type Host struct {
	// ID is recorded on every run (host_id). Start-up recovery marks only
	// this id's unfinished runs interrupted, so it must stay the same
	// across restarts of one host and differ between hosts. Default:
	// hostname/listen address.
	ID string `yaml:"id"`
}

// Store is the run store.
type Store struct {
	Driver string `yaml:"driver"` // sqlite | postgres
	// Path is the SQLite file.
	Path string `yaml:"path"`
	// DSN is the PostgreSQL connection string. Prefer DSNEnv: a password
	// written here is in the file.
	DSN string `yaml:"dsn"`
	// DSNEnv names an environment variable that holds the DSN.
	DSNEnv string `yaml:"dsn_env"`
	// CommitWindow is how long the group-commit writer waits for more
	// writes to share a transaction.
	CommitWindow Duration `yaml:"commit_window"`
	// CommitBatch is the largest number of writes in one transaction.
	CommitBatch int `yaml:"commit_batch"`
	// Retention, when set, purges the stored input and output of runs
	// that ended longer ago (the run rows stay). Off by default.
	Retention Duration `yaml:"retention"`
}

// PostgresDSN returns the configured DSN: store.dsn, or the value of the
// variable store.dsn_env names.
func (s Store) PostgresDSN() string {
	if s.DSNEnv != "" {
		return os.Getenv(s.DSNEnv)
	}
	return s.DSN
}

// Provider is the model provider behind the reference agent.
type Provider struct {
	Kind    string  `yaml:"kind"` // offline | openai
	Offline Offline `yaml:"offline"`
	OpenAI  OpenAI  `yaml:"openai"` // see provider.go
}

// Offline configures the offline provider.
type Offline struct {
	TokenDelay Duration `yaml:"token_delay"`
}

// Plugins configures the WebAssembly runtime.
type Plugins struct {
	CacheDir       string `yaml:"cache_dir"`
	PoolSize       int    `yaml:"pool_size"`
	MaxMemoryPages uint32 `yaml:"max_memory_pages"`
	// CallTimeout is each plugin call's time budget.
	CallTimeout Duration `yaml:"call_timeout"`
	// CallTimeoutPerMiB extends CallTimeout per MiB of a call's input.
	CallTimeoutPerMiB Duration `yaml:"call_timeout_per_mib"`
	// StoreDir keeps plugins uploaded through the admin API, named by
	// their sha256.
	StoreDir string `yaml:"store_dir"`
	// StreamWindow batches streamed text for plugins that export
	// map_stream: at most one call per window (0 = one call per arrival).
	StreamWindow Duration `yaml:"stream_window"`
	// Origins are the https URLs (scheme, host, optional port and path
	// prefix) a host subscribed to a control plane (serve --xds) may fetch
	// plugins from, besides the control plane's own plugin server. Any
	// other URL is refused without a request. Read at start.
	Origins []string `yaml:"origins"`
	// TrustedKeys, when set, are the ed25519 keys ("ed25519:<base64>",
	// plugins/signature) a plugin arriving by the admin API or a control
	// plane must be signed with; anything else is refused before it is
	// loaded. The chains of this file are the operator's and not checked.
	TrustedKeys []string `yaml:"trusted_keys"`
}

// Admin is the operator listener: plugin swap and list, /metrics. Only
// tokens marked admin may use it. "off" disables it.
type Admin struct {
	Listen string `yaml:"listen"`
	// MetricsPublic serves /metrics without a token, for a scraper on a
	// private network.
	MetricsPublic bool `yaml:"metrics_public"`
	// UI is the operator page served at /ui/ on this listener.
	UI AdminUI `yaml:"ui"`
}

// AdminUI configures the operator page's login session.
type AdminUI struct {
	// SecureCookie marks the session cookie Secure even when the admin
	// listener is plain HTTP: set it when a TLS terminator sits in front.
	// Over TLS the cookie is always Secure.
	SecureCookie bool `yaml:"secure_cookie"`
	// SessionTTL is how long a login lasts (default 8h).
	SessionTTL Duration `yaml:"session_ttl"`
	// TrustedProxies are the addresses (CIDR, or a single IP) of proxies
	// in front of the admin listener whose X-Forwarded-For is believed:
	// the login throttle then counts the client address they name. From
	// any other peer the header is ignored. Default: none.
	TrustedProxies []string `yaml:"trusted_proxies"`
}

// Chain is one endpoint's chain: the plugin files of its mapping stages.
// The stages and their order are fixed (filters/builtin.Order).
type Chain struct {
	MapRequest string `yaml:"map_request"`
	Translate  string `yaml:"translate"`
}

// Endpoint keys of Chains (internal/contract names the endpoints).
const (
	ChainChat      = contract.EndpointChat
	ChainResponses = contract.EndpointResponses
)

// Duration is a time.Duration written as "10s", "5m". A value that does not
// parse is kept as an error for Validate, which names the field.
type Duration struct {
	d   time.Duration
	bad string
}

// Dur makes a Duration.
func Dur(d time.Duration) Duration { return Duration{d: d} }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		*d = Duration{bad: string(b)}
		return nil
	}
	*d = Duration{d: v}
	return nil
}

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return d.d }

// check reports a value that did not parse, or a negative one.
func (d Duration) check() string {
	switch {
	case d.bad != "":
		return "\"" + d.bad + "\" is not a duration (e.g. 500ms, 10s, 5m)"
	case d.d < 0:
		return "must not be negative"
	}
	return ""
}
