package config

import (
	"net/url"

	"github.com/runedge/runedge/internal/confval"
	"github.com/runedge/runedge/runner/provider/openai"
)

// Provider kinds.
const (
	ProviderOffline = "offline"
	ProviderOpenAI  = "openai"
)

// DefaultOpenAIBaseURL is OpenAI's own API.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAI configures the openai provider: any OpenAI-compatible upstream
// (runner/provider/openai). Plain values only, so that Provider stays
// comparable (a reload compares it to report restart-only changes).
type OpenAI struct {
	// BaseURL is the API root before /chat/completions.
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv names the environment variable holding the API key: the
	// key itself never goes in the file. Empty: no Authorization header
	// (local servers).
	APIKeyEnv string `yaml:"api_key_env"`
	// Model is the upstream's model name.
	Model string `yaml:"model"`
	// IncludeUsage requests stream_options.include_usage on streamed
	// calls; set it only when the upstream accepts the option.
	IncludeUsage     bool     `yaml:"include_usage"`
	ConnectTimeout   Duration `yaml:"connect_timeout"`
	FirstByteTimeout Duration `yaml:"first_byte_timeout"`
	IdleTimeout      Duration `yaml:"idle_timeout"`
	// MaxAttempts is how many times a call is tried before anything
	// reached the client (1: no retries).
	MaxAttempts int      `yaml:"max_attempts"`
	BackoffBase Duration `yaml:"backoff_base"`
	BackoffMax  Duration `yaml:"backoff_max"`
}

func (o *OpenAI) applyDefaults() {
	if o.BaseURL == "" {
		o.BaseURL = DefaultOpenAIBaseURL
	}
	for _, d := range []struct {
		f *Duration
		v Duration
	}{{&o.ConnectTimeout, Dur(openai.DefaultConnectTimeout)}, {&o.FirstByteTimeout, Dur(openai.DefaultFirstByteTimeout)},
		{&o.IdleTimeout, Dur(openai.DefaultIdleTimeout)}, {&o.BackoffBase, Dur(openai.DefaultBackoffBase)},
		{&o.BackoffMax, Dur(openai.DefaultBackoffMax)}} {
		if *d.f == (Duration{}) {
			*d.f = d.v
		}
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = openai.DefaultMaxAttempts
	}
}

// validateProvider checks the provider section; bad reports a problem
// naming its field.
func (c *Config) validateProvider(bad func(field, format string, args ...any)) {
	o := c.Provider.OpenAI
	for _, d := range []struct {
		field string
		d     Duration
	}{{"provider.openai.connect_timeout", o.ConnectTimeout}, {"provider.openai.first_byte_timeout", o.FirstByteTimeout},
		{"provider.openai.idle_timeout", o.IdleTimeout}, {"provider.openai.backoff_base", o.BackoffBase},
		{"provider.openai.backoff_max", o.BackoffMax}} {
		if msg := d.d.Check(); msg != "" {
			bad(d.field, "%s", msg)
		}
	}
	switch c.Provider.Kind {
	case ProviderOffline:
		return
	case ProviderOpenAI:
	default:
		bad("provider.kind", "want %s or %s, got %q", ProviderOffline, ProviderOpenAI, c.Provider.Kind)
		return
	}
	if u, err := url.Parse(o.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("provider.openai.base_url", "want an http(s) URL such as %s, got %q", DefaultOpenAIBaseURL, o.BaseURL)
	}
	if o.Model == "" {
		bad("provider.openai.model", "is required: the upstream's model name")
	}
	if o.APIKeyEnv != "" && !confval.EnvName(o.APIKeyEnv) {
		bad("provider.openai.api_key_env", "want the name of an environment variable (e.g. OPENAI_API_KEY), not the key itself")
	}
	if o.MaxAttempts < 1 || o.MaxAttempts > openai.MaxAttemptsLimit {
		bad("provider.openai.max_attempts", "want 1 to %d, got %d", openai.MaxAttemptsLimit, o.MaxAttempts)
	}
	if o.BackoffBase.Std() > o.BackoffMax.Std() {
		bad("provider.openai.backoff_base", "%s is above backoff_max %s", o.BackoffBase.Std(), o.BackoffMax.Std())
	}
}
