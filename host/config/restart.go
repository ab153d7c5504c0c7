package config

import "reflect"

// Setting is one setting a running server reads only at start: the
// listeners it opened, the store, provider, plugin runtime, telemetry and
// run service it built. A reload cannot change it; KeepRestartOnly keeps
// the running value and says so.
type Setting struct {
	// Name is the setting's path in the configuration file.
	Name string
	// field returns a pointer to the setting in c.
	field func(c *Config) any
}

// RestartOnly is the one list of restart-only settings: a reload warns
// about each one that changed and keeps its running value, both from this
// list, so the two cannot disagree.
var RestartOnly = []Setting{
	{"listen", func(c *Config) any { return &c.Listen }},
	{"host.id", func(c *Config) any { return &c.Host.ID }}, // recorded on runs by the run service
	{"host.heap_floor_bytes", func(c *Config) any { return &c.Host.HeapFloorBytes }},
	{"store", func(c *Config) any { return &c.Store }},
	{"runs", func(c *Config) any { return &c.Runs }}, // the run service's leases
	{"provider", func(c *Config) any { return &c.Provider }},
	{"plugins", func(c *Config) any { return &c.Plugins }}, // the plugin runtime and its trust
	{"admin", func(c *Config) any { return &c.Admin }},
	{"limits.run_timeout", func(c *Config) any { return &c.Limits.RunTimeout }},
	{"limits.max_in_flight", func(c *Config) any { return &c.Limits.MaxInFlight }},
	{"limits.max_in_flight_per_tenant", func(c *Config) any { return &c.Limits.MaxInFlightPerTenant }},
	{"limits.max_in_flight_per_token", func(c *Config) any { return &c.Limits.MaxInFlightPerToken }},
	{"limits.max_background", func(c *Config) any { return &c.Limits.MaxBackground }},
	{"limits.shutdown_grace", func(c *Config) any { return &c.Limits.ShutdownGrace }},
	{"limits.history", func(c *Config) any { return &c.Limits.History }},                       // the run service's bounds
	{"limits.read_header_timeout", func(c *Config) any { return &c.Limits.ReadHeaderTimeout }}, // the listeners' header deadline
	{"log", func(c *Config) any { return &c.Log }},
	{"metrics", func(c *Config) any { return &c.Metrics }},
	{"tracing", func(c *Config) any { return &c.Tracing }}, // the exporter is built at start
}

// Field returns a pointer to the setting in c (for tests that walk the
// list).
func (s Setting) Field(c *Config) any { return s.field(c) }

// KeepRestartOnly sets every restart-only setting of next to its value in
// cur and returns the names of those that differed: the changes a reload
// does not apply.
func KeepRestartOnly(cur, next *Config) (changed []string) {
	for _, s := range RestartOnly {
		was, now := reflect.ValueOf(s.field(cur)).Elem(), reflect.ValueOf(s.field(next)).Elem()
		if !reflect.DeepEqual(was.Interface(), now.Interface()) { // sections hold slices (plugin origins)
			changed = append(changed, s.Name)
			now.Set(was)
		}
	}
	return changed
}
