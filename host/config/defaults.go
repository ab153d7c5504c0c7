package config

import (
	"os"
	"time"
)

// BuiltinPlugin names the built-in default mapping in a chain stage, a
// swap or xDS chains, in place of a plugin file (plugins/native.Ref).
const BuiltinPlugin = "builtin:openai"

// Default values; documented in docs/configuration.md (TestConfigurationDocumented).
const (
	DefaultListen        = "127.0.0.1:8080"
	DefaultRunTimeout    = 5 * time.Minute
	DefaultShutdownGrace = 10 * time.Second
	DefaultStorePath     = "data/runedge.db"
	DefaultCacheDir      = "data/wazero-cache"
	DefaultMaxPages      = 1024 // 64 MiB per plugin instance
	// DefaultPlugin maps both endpoints: every stage left empty uses it.
	// It names the built-in default mapping (plugins/native), which the
	// host runs natively, compiling nothing; naming its WebAssembly build
	// (plugins/build/openai.wasm, `make plugins`) runs the same code in
	// wasm, as any other plugin file.
	DefaultPlugin      = BuiltinPlugin
	DefaultAdminListen = "127.0.0.1:8081"
	// DefaultSessionTTL is how long an operator page login lasts.
	DefaultSessionTTL = 8 * time.Hour
	DefaultStoreDir   = "data/plugins"

	// DefaultMaxInFlight bounds the runs in flight on a host; a tenant and
	// a token may each have half of it by default (limits.max_in_flight_per_*
	// unset), so that no one tenant or token takes every slot.
	DefaultMaxInFlight = 512
	// DefaultMaxBackground bounds background runs, which hold memory with
	// no client connected (about one request body each while their
	// provider call lasts).
	DefaultMaxBackground = 32

	DefaultWriteTimeout      = 30 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultMaxAdminBodyBytes = 64 << 20
	// DefaultHeapFloorBytes is host.heap_floor_bytes' default: the GOGC=100
	// goal of a host at 128 connections (about 14 MB) stays above it, so the
	// floor changes only small heaps and not the peak RSS (RATIONALE.md,
	// "The tail at one connection").
	DefaultHeapFloorBytes = 12 << 20
	// DefaultCallTimeoutPerMiB: mapping 1 MiB of 34,000 small messages
	// took up to 1.1 s end to end on a 2-core machine at load average 24
	// (RATIONALE.md, "The time budget: a step counter").
	DefaultCallTimeoutPerMiB = 2 * time.Second
	DefaultCommitWindow      = 0 // see runner/store/sqlite.DefaultCommitWindow
	DefaultCommitBatch       = 128
)

// Default returns the configuration used without a file: everything but
// the tokens, which the caller supplies.
func Default() *Config {
	c := &Config{}
	c.applyDefaults()
	return c
}

func (c *Config) applyDefaults() {
	c.stageDefaults()
	c.Usage.applyDefaults()
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Limits.MaxInFlight == 0 {
		c.Limits.MaxInFlight = DefaultMaxInFlight
	}
	half := max(1, c.Limits.MaxInFlight/2)
	if c.Limits.MaxInFlightPerTenant == 0 {
		c.Limits.MaxInFlightPerTenant = half
	}
	if c.Limits.MaxInFlightPerToken == 0 {
		c.Limits.MaxInFlightPerToken = half
	}
	if c.Limits.MaxBackground == 0 {
		c.Limits.MaxBackground = DefaultMaxBackground
	}
	if c.Metrics.MaxTenantLabels == 0 {
		c.Metrics.MaxTenantLabels = DefaultMaxTenantLabels
	}
	if c.Limits.RunTimeout == (Duration{}) {
		c.Limits.RunTimeout = Dur(DefaultRunTimeout)
	}
	if c.Limits.ShutdownGrace == (Duration{}) {
		c.Limits.ShutdownGrace = Dur(DefaultShutdownGrace)
	}
	if c.Limits.WriteTimeout == (Duration{}) {
		c.Limits.WriteTimeout = Dur(DefaultWriteTimeout)
	}
	if c.Limits.ReadHeaderTimeout == (Duration{}) {
		c.Limits.ReadHeaderTimeout = Dur(DefaultReadHeaderTimeout)
	}
	if c.Plugins.CallTimeoutPerMiB == (Duration{}) {
		c.Plugins.CallTimeoutPerMiB = Dur(DefaultCallTimeoutPerMiB)
	}
	c.Limits.History.applyDefaults()
	c.Runs.applyDefaults()
	if c.Limits.MaxAdminBodyBytes == 0 {
		c.Limits.MaxAdminBodyBytes = DefaultMaxAdminBodyBytes
	}
	if c.Store.Driver == "" {
		c.Store.Driver = "sqlite"
	}
	if c.Store.Path == "" {
		c.Store.Path = DefaultStorePath
	}
	if c.Store.CommitBatch == 0 {
		c.Store.CommitBatch = DefaultCommitBatch
	}
	if c.Host.HeapFloorBytes == 0 {
		c.Host.HeapFloorBytes = DefaultHeapFloorBytes
	}
	if c.Host.ID == "" {
		c.Host.ID = defaultHostID(c.Listen)
	}
	if c.Provider.Kind == "" {
		c.Provider.Kind = "offline"
	}
	c.Provider.OpenAI.applyDefaults()
	if c.Plugins.CacheDir == "" {
		c.Plugins.CacheDir = DefaultCacheDir
	}
	if c.Plugins.StoreDir == "" {
		c.Plugins.StoreDir = DefaultStoreDir
	}
	if c.Admin.Listen == "" {
		c.Admin.Listen = DefaultAdminListen
	}
	if c.Admin.UI.SessionTTL == (Duration{}) {
		c.Admin.UI.SessionTTL = Dur(DefaultSessionTTL)
	}
	if c.Plugins.MaxMemoryPages == 0 {
		c.Plugins.MaxMemoryPages = DefaultMaxPages
	}
	if c.Chains == nil {
		c.Chains = map[string]Chain{}
	}
	for _, ep := range []string{ChainChat, ChainResponses} {
		ch := c.Chains[ep]
		if ch.MapRequest == "" {
			ch.MapRequest = DefaultPlugin
		}
		if ch.Translate == "" {
			ch.Translate = DefaultPlugin
		}
		c.Chains[ep] = ch
	}
}

// defaultHostID is hostname/listen: stable across restarts of one host,
// different for two hosts (or two processes on one machine).
func defaultHostID(listen string) string {
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "localhost"
	}
	return name + "/" + listen
}
