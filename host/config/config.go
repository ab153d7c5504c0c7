// Package config loads and validates runedge's YAML configuration. Loading
// is separate from the running chain: a Config is a plain value, checked in
// full before anything is built from it, so a bad file is refused at start
// (or, later, on reload) with a message that names the field.
package config

import (
	"os"
	"time"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/filters/body"
	"github.com/runedge/runedge/filters/compaction"
	"github.com/runedge/runedge/filters/mapping"
	"github.com/runedge/runedge/filters/translate"
	"github.com/runedge/runedge/internal/confval"
	"github.com/runedge/runedge/internal/contract"
)

// Config is the whole configuration file.
type Config struct {
	// Listen is the address of the HTTP server.
	Listen   string           `yaml:"listen"`
	Host     Host             `yaml:"host"`
	Tokens   []Token          `yaml:"tokens"`
	Actors   auth.Actors      `yaml:"actors"` // the auth stage's
	Limits   Limits           `yaml:"limits"`
	Store    Store            `yaml:"store"`
	Runs     Runs             `yaml:"runs"` // see runs.go
	Provider Provider         `yaml:"provider"`
	Plugins  Plugins          `yaml:"plugins"`
	Admin    Admin            `yaml:"admin"`
	Chains   map[string]Chain `yaml:"chains"`
	Tools    mapping.Config   `yaml:"tools"`   // the map-request stage's
	Log      Log              `yaml:"log"`     // see observe.go
	Metrics  Metrics          `yaml:"metrics"` // see observe.go
	Tracing  Tracing          `yaml:"tracing"` // see tracing.go
	// WebSocket is the WebSocket mode of /v1/responses; see websocket.go.
	WebSocket WebSocket `yaml:"websocket"`
	// Compaction: the keys of compaction items (the compaction stage's).
	Compaction compaction.Config `yaml:"compaction"`
	// Usage: prices and budgets (usage.go).
	Usage Usage `yaml:"usage"`
	// Media: the media URL policy (the map-request stage's).
	Media mapping.MediaConfig `yaml:"media"`
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

// Limits bound the work a request may cause.
type Limits struct {
	// Config is the body stage's part: max_body_bytes, read_body_timeout.
	body.Config `yaml:",inline"`
	// MaxInFlight bounds the runs in flight on this host (0: the default,
	// DefaultMaxInFlight; there is no unbounded setting).
	MaxInFlight   int      `yaml:"max_in_flight"`
	RunTimeout    Duration `yaml:"run_timeout"`
	ShutdownGrace Duration `yaml:"shutdown_grace"`
	// RateConfig is the auth stage's part: rate_per_second, burst,
	// tenant_rate_per_second, tenant_burst.
	auth.RateConfig `yaml:",inline"`
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
	// ReadHeaderTimeout bounds reading a request's headers, on both
	// listeners.
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"`
	// MaxAdminBodyBytes bounds an upload to the admin API (a plugin).
	MaxAdminBodyBytes int64 `yaml:"max_admin_body_bytes"`
	// KeepaliveConfig is the translate stage's part: sse_keepalive.
	translate.KeepaliveConfig `yaml:",inline"`
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
	// HeapFloorBytes is the smallest heap goal the garbage collector is
	// given (host/internal/gcfloor): a host whose live heap is small
	// collects once per this many bytes allocated instead of once per
	// live heap's worth, which took the collections out of the p99 at one
	// connection. 0 means DefaultHeapFloorBytes; a negative value turns
	// the floor off. GOGC set in the environment wins over it.
	HeapFloorBytes int64 `yaml:"heap_floor_bytes"`
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
	// WindowConfig is the translate stage's part: stream_window.
	translate.WindowConfig `yaml:",inline"`
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

// Duration is a duration field of the file ("10s", "5m"); the type is
// confval's, shared with the stages' own sections.
type Duration = confval.Duration

// Dur makes a Duration.
func Dur(d time.Duration) Duration { return confval.Dur(d) }
