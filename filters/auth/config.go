package auth

import (
	"strings"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/internal/confval"
)

// Actors is the actors section of the configuration file: the attribution
// policy. The tokens stay in the file's own section (host/config), which
// hands them to Setup parsed.
type Actors struct {
	// Missing is what happens without actor headers: "token" attributes the
	// request to the token (actor type service), "require" refuses it.
	Missing string `yaml:"missing"`
	// DefaultTenant is the tenant of an unbound token that sends no
	// x-service-tenant-id.
	DefaultTenant string `yaml:"default_tenant"`
}

// DefaultTenant is actors.default_tenant's default.
const DefaultTenant = "default"

// Defaults fills the fields left unset.
func (a *Actors) Defaults() {
	if a.Missing == "" {
		a.Missing = string(ActorFromToken)
	}
	if a.DefaultTenant == "" {
		a.DefaultTenant = DefaultTenant
	}
}

// Validate reports each bad field, named under path (the section).
func (a *Actors) Validate(path string) error {
	p := confval.At(path)
	if ActorPolicy(a.Missing) != ActorFromToken && ActorPolicy(a.Missing) != ActorRequired {
		p.Add("missing", "want token or require, got %q", a.Missing)
	}
	if !ValidTenant(a.DefaultTenant) {
		p.Add("default_tenant", "%q is not a tenant id", a.DefaultTenant)
	}
	return p.Err()
}

// RateConfig is the stage's part of the limits section: the rate limits
// per token and per tenant (host/config inlines it there).
type RateConfig struct {
	// RatePerSecond and Burst limit each token (0: no limit).
	RatePerSecond float64 `yaml:"rate_per_second"`
	Burst         int     `yaml:"burst"`
	// TenantRatePerSecond and TenantBurst limit each tenant, whatever
	// token it comes with (0: the token's figures).
	TenantRatePerSecond float64 `yaml:"tenant_rate_per_second"`
	TenantBurst         int     `yaml:"tenant_burst"`
}

// Defaults does nothing: every rate is off unless set.
func (*RateConfig) Defaults() {}

// Validate reports each negative figure, named under path (the section).
func (r *RateConfig) Validate(path string) error {
	p := confval.At(path)
	for _, f := range []struct {
		name string
		neg  bool
	}{{"rate_per_second", r.RatePerSecond < 0}, {"burst", r.Burst < 0},
		{"tenant_rate_per_second", r.TenantRatePerSecond < 0}, {"tenant_burst", r.TenantBurst < 0}} {
		if f.neg {
			p.Add(f.name, "must not be negative")
		}
	}
	return p.Err()
}

// Rates are the figures the stage's Limits apply: per token, and per
// tenant (tenant_*, else the token's figures).
func (r RateConfig) Rates() (token, tenant Rate) {
	token = Rate{PerSecond: r.RatePerSecond, Burst: r.Burst}
	tenant = token
	if r.TenantRatePerSecond > 0 {
		tenant = Rate{PerSecond: r.TenantRatePerSecond, Burst: r.TenantBurst}
	}
	return token, tenant
}

// ValidTenant says whether s is a tenant id, as the stage accepts one in
// x-service-tenant-id: 1 to 128 letters, digits, . _ : -.
func ValidTenant(s string) bool {
	return s != "" && len(s) <= maxTenantLen && strings.IndexFunc(s, func(r rune) bool { return !filters.IDChar(r) }) < 0
}
