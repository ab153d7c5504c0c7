package mapping

import (
	"github.com/runedge/runedge/internal/confval"
	"github.com/runedge/runedge/internal/mediaurl"
)

// Config is the tools section of the configuration file: how the stage
// treats the tools clients send.
type Config struct {
	// Hosted is what a hosted tool the agent cannot run (web_search,
	// file_search, code_interpreter, mcp, computer and shell types …) does
	// to a Responses request: "withhold" (the default) serves the request
	// without offering it to the model, records and counts it; "refuse"
	// answers 400 unsupported_parameter naming it.
	Hosted string `yaml:"hosted"`
}

// Values of tools.hosted.
const (
	HostedWithhold = "withhold"
	HostedRefuse   = "refuse"
)

// Defaults fills the fields left unset.
func (c *Config) Defaults() {
	if c.Hosted == "" {
		c.Hosted = HostedWithhold
	}
}

// Validate reports each bad field, named under path (the section).
func (c *Config) Validate(path string) error {
	p := confval.At(path)
	if c.Hosted != HostedWithhold && c.Hosted != HostedRefuse {
		p.Add("hosted", "want %s or %s, got %q", HostedWithhold, HostedRefuse, c.Hosted)
	}
	return p.Err()
}

// Policy is the stage's policy for withheld hosted tools under c; count,
// when set, is called once per withheld tool with its type (the host
// counts them in a metric).
func (c Config) Policy(count func(typ string)) Hosted {
	return Hosted{Refuse: c.Hosted == HostedRefuse, Count: count}
}

// MediaConfig is the media section of the configuration file: which URLs
// of images and files clients send are passed to the upstream
// (internal/mediaurl). runedge fetches none of them.
type MediaConfig struct {
	// AllowHTTP passes http: URLs beside https: and data: ones.
	AllowHTTP bool `yaml:"allow_http"`
	// AllowPrivateHosts passes URLs whose host is a private, loopback or
	// link-local address or a local name (localhost, *.local, *.internal).
	AllowPrivateHosts bool `yaml:"allow_private_hosts"`
}

// Defaults fills the fields left unset: both off.
func (c *MediaConfig) Defaults() {}

// Validate reports each bad field: none can be.
func (c *MediaConfig) Validate(path string) error { return nil }

// Policy is the stage's media URL policy under c.
func (c MediaConfig) Policy() mediaurl.Policy {
	return mediaurl.Policy{AllowHTTP: c.AllowHTTP, AllowPrivateHosts: c.AllowPrivateHosts}
}
