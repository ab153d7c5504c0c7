package config

import (
	"fmt"
	"net/netip"

	"github.com/runedge/runedge/filters/auth"
)

// Proxies parses admin.ui.trusted_proxies: each entry a CIDR prefix or a
// single address (a /32 or /128). Validate has refused a bad entry.
func (u AdminUI) Proxies() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(u.TrustedProxies))
	for _, s := range u.TrustedProxies {
		if p, ok := parseProxy(s); ok {
			out = append(out, p)
		}
	}
	return out
}

func parseProxy(s string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), true
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, false
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), true
}

// validateAccess checks the fields that decide whose word is believed and
// what is labelled: the operator page's trusted proxies and the metrics'
// tenant label.
func (c *Config) validateAccess(bad func(field, format string, args ...any)) {
	for i, s := range c.Admin.UI.TrustedProxies {
		if _, ok := parseProxy(s); !ok {
			bad(fmt.Sprintf("admin.ui.trusted_proxies[%d]", i), "%q is not an address or CIDR prefix (e.g. 10.0.0.0/8, 192.0.2.7)", s)
		}
	}
	for i, t := range c.Metrics.Tenants {
		if !auth.ValidTenant(t) {
			bad(fmt.Sprintf("metrics.tenants[%d]", i), "%q is not a tenant id (letters, digits, . _ : -)", t)
		}
	}
	if c.Metrics.MaxTenantLabels < 0 {
		bad("metrics.max_tenant_labels", "must not be negative (0 or absent: %d)", DefaultMaxTenantLabels)
	}
}

// LabelledTenants are the tenants that keep their own value of the
// metrics' tenant label, at most metrics.max_tenant_labels of them:
// metrics.tenants, then the tenants tokens are bound to (in file order),
// then actors.default_tenant.
func (c *Config) LabelledTenants() []string {
	limit := c.Metrics.MaxTenantLabels
	if limit == 0 {
		limit = DefaultMaxTenantLabels
	}
	seen := map[string]bool{}
	var out []string
	add := func(t string) {
		if t != "" && !seen[t] && len(out) < limit {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, t := range c.Metrics.Tenants {
		add(t)
	}
	for _, t := range c.Tokens {
		add(t.Tenant)
	}
	add(c.Actors.DefaultTenant)
	return out
}
