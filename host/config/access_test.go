package config

import (
	"net/netip"
	"slices"
	"testing"
)

// Runs in flight are bounded by default: the host, each tenant and each
// token (half of the host's), and background runs.
func TestInFlightDefaults(t *testing.T) {
	c, err := Parse([]byte(""))
	if err != nil {
		t.Fatal(err)
	}
	l := c.Limits
	if l.MaxInFlight != DefaultMaxInFlight || l.MaxInFlightPerTenant != DefaultMaxInFlight/2 ||
		l.MaxInFlightPerToken != DefaultMaxInFlight/2 || l.MaxBackground != DefaultMaxBackground || l.MaxBackground >= l.MaxInFlight {
		t.Fatalf("in-flight defaults: %+v", l)
	}
	c, err = Parse([]byte("limits: {max_in_flight: 8}"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.MaxInFlightPerTenant != 4 || c.Limits.MaxInFlightPerToken != 4 {
		t.Fatalf("per-tenant and per-token defaults follow max_in_flight: %+v", c.Limits)
	}
}

func TestTrustedProxies(t *testing.T) {
	c, err := Parse([]byte("admin: {ui: {trusted_proxies: [10.0.0.0/8, 192.0.2.7, '2001:db8::/32', '::ffff:198.51.100.1']}}"))
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"),
		netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("198.51.100.1/32")}
	if got := c.Admin.UI.Proxies(); !slices.Equal(got, want) {
		t.Fatalf("proxies: %v, want %v", got, want)
	}
}

// The tenants that keep their label: metrics.tenants, tokens' tenants,
// the default tenant, each once, at most metrics.max_tenant_labels.
func TestLabelledTenants(t *testing.T) {
	c, err := Parse([]byte(`
tokens:
  - {name: a, hash: "sha256:0000000000000000000000000000000000000000000000000000000000000000", tenant: acme}
  - {name: b, hash: "sha256:1111111111111111111111111111111111111111111111111111111111111111", tenant: listed}
metrics: {tenant_label: true, tenants: [listed, beta]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.LabelledTenants(); !slices.Equal(got, []string{"listed", "beta", "acme", "default"}) {
		t.Fatalf("labelled tenants: %v", got)
	}
	c.Metrics.MaxTenantLabels = 2
	if got := c.LabelledTenants(); !slices.Equal(got, []string{"listed", "beta"}) {
		t.Fatalf("capped: %v", got)
	}
}
