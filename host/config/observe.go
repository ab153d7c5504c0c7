package config

// Log configures the process log.
type Log struct {
	// Format is text (default) or json.
	Format string `yaml:"format"`
}

// Metrics configures the Prometheus metrics on the admin listener.
type Metrics struct {
	// TenantLabel adds a tenant label to the request, run and token
	// metrics. Off by default: tenants are unbounded in number, and every
	// label value is a time series a scraper must keep.
	TenantLabel bool `yaml:"tenant_label"`
	// Tenants are tenant ids that keep their own label value, besides the
	// tenants tokens are bound to and actors.default_tenant: the tenants an
	// unbound token (an app server) names. Every other tenant is labelled
	// "other", so a client cannot make a series per name it invents.
	Tenants []string `yaml:"tenants"`
	// MaxTenantLabels bounds the configured tenants that keep their names
	// (metrics.tenants first, then tokens' tenants in file order, then the
	// default tenant); the rest are "other" too. 0: DefaultMaxTenantLabels.
	MaxTenantLabels int `yaml:"max_tenant_labels"`
}

// DefaultMaxTenantLabels is how many configured tenants keep their own
// tenant label value: each is a handful of series per metric.
const DefaultMaxTenantLabels = 100

// validateObservability checks the log fields.
func (c *Config) validateObservability(bad func(field, format string, args ...any)) {
	switch c.Log.Format {
	case "", "text", "json":
	default:
		bad("log.format", "want text or json, got %q", c.Log.Format)
	}
}
