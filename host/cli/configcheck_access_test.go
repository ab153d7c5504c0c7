package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `runedge config check` names each new access and limit field it refuses.
func TestConfigCheckNamesAccessFields(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range []struct{ doc, field string }{
		{"limits: {max_in_flight_per_token: -1}", "limits.max_in_flight_per_token"},
		{"limits: {max_background: -2}", "limits.max_background"},
		{"limits: {max_in_flight_per_tenant: -1}", "limits.max_in_flight_per_tenant"},
		{"admin: {ui: {trusted_proxies: [10.0.0.0/8, proxy.example]}}", "admin.ui.trusted_proxies[1]"},
		{"metrics: {tenants: [ok, 'not ok']}", "metrics.tenants[1]"},
		{"metrics: {max_tenant_labels: -1}", "metrics.max_tenant_labels"},
	} {
		path := filepath.Join(dir, "c"+string(rune('a'+i))+".yaml")
		if err := os.WriteFile(path, []byte(tc.doc+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := run(t, "config", "check", "--config", path); code != 1 || !strings.Contains(errOut, tc.field) {
			t.Errorf("%s: %d %s, want an error naming %s", tc.doc, code, errOut, tc.field)
		}
	}
}
