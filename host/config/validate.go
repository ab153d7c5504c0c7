package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/plugins/signature"
)

var (
	hashRE   = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	hostIDRE = regexp.MustCompile(`^[A-Za-z0-9._:/-]{1,128}$`)
)

// Validate checks every field and reports all problems, each naming its
// field as it is written in the file.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", "want host:port, got %q", c.Listen)
	}
	names := map[string]bool{}
	for i, t := range c.Tokens {
		f := fmt.Sprintf("tokens[%d]", i)
		switch {
		case t.Name == "":
			bad(f+".name", "is required")
		case names[t.Name]:
			bad(f+".name", "%q is used twice", t.Name)
		}
		names[t.Name] = true
		if !hashRE.MatchString(t.Hash) {
			bad(f+".hash", "want sha256:<64 lowercase hex digits> (see `runedge token hash`)")
		}
		if t.Tenant != "" && !auth.ValidTenant(t.Tenant) {
			bad(f+".tenant", "%q is not a tenant id (letters, digits, . _ : -)", t.Tenant)
		}
	}
	c.Limits.History.validate(bad)
	for _, n := range []struct {
		field string
		v     int
	}{{"limits.max_in_flight", c.Limits.MaxInFlight}, {"limits.max_in_flight_per_tenant", c.Limits.MaxInFlightPerTenant},
		{"limits.max_in_flight_per_token", c.Limits.MaxInFlightPerToken}, {"limits.max_background", c.Limits.MaxBackground}} {
		if n.v < 0 {
			bad(n.field, "must not be negative (0 or absent: the default)")
		}
	}
	for _, d := range []struct {
		field string
		d     Duration
	}{{"limits.run_timeout", c.Limits.RunTimeout}, {"limits.shutdown_grace", c.Limits.ShutdownGrace},
		{"limits.write_timeout", c.Limits.WriteTimeout}, {"limits.read_header_timeout", c.Limits.ReadHeaderTimeout},
		{"provider.offline.token_delay", c.Provider.Offline.TokenDelay},
		{"plugins.call_timeout", c.Plugins.CallTimeout}, {"plugins.call_timeout_per_mib", c.Plugins.CallTimeoutPerMiB},
		{"store.commit_window", c.Store.CommitWindow}, {"store.retention", c.Store.Retention},
		{"admin.ui.session_ttl", c.Admin.UI.SessionTTL}} {
		if msg := d.d.Check(); msg != "" {
			bad(d.field, "%s", msg)
		}
	}
	if c.Limits.MaxAdminBodyBytes < 0 {
		bad("limits.max_admin_body_bytes", "must be positive")
	}
	c.validateStore(bad)
	c.Runs.validate(bad)
	if !hostIDRE.MatchString(c.Host.ID) {
		bad("host.id", "%q is not a host id (1-128 of letters, digits, . _ : / -)", c.Host.ID)
	}
	c.validateProvider(bad)
	if c.Admin.Listen != "off" {
		if _, _, err := net.SplitHostPort(c.Admin.Listen); err != nil {
			bad("admin.listen", "want host:port or off, got %q", c.Admin.Listen)
		}
	}
	if c.Plugins.PoolSize < 0 {
		bad("plugins.pool_size", "must not be negative")
	}
	for i, k := range c.Plugins.TrustedKeys {
		if _, err := signature.ParseKey(k); err != nil {
			bad(fmt.Sprintf("plugins.trusted_keys[%d]", i), "%v", err)
		}
	}
	c.validateObservability(bad)
	c.validateAccess(bad)
	c.validateWebSocket(bad)
	c.validateTracing(bad)
	c.validateUsage(bad)
	for i, o := range c.Plugins.Origins {
		if u, err := url.Parse(o); err != nil || u.Scheme != "https" || u.Hostname() == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			bad(fmt.Sprintf("plugins.origins[%d]", i), "want an https URL (scheme, host, optional port and path), got %q", o)
		}
	}
	for ep := range c.Chains {
		if ep != ChainChat && ep != ChainResponses {
			bad("chains."+ep, "unknown endpoint (want %s or %s)", ChainChat, ChainResponses)
		}
		for field, v := range map[string]string{contract.ChainKeyMapRequest: c.Chains[ep].MapRequest, contract.ChainKeyTranslate: c.Chains[ep].Translate} {
			if strings.HasPrefix(v, "builtin:") && v != BuiltinPlugin {
				bad("chains."+ep+"."+field, "unknown built-in plugin %q (the built-in one is %s; anything else is a .wasm file)", v, BuiltinPlugin)
			}
		}
	}
	errs = append(errs, c.validateStages())
	return errors.Join(errs...)
}
