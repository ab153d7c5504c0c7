package cli

import (
	"os"
	"strings"
	"testing"
)

// TestNodeIDFromCertificate: --node must be a name of --xds-cert (the
// control plane would refuse it otherwise, so the start fails); without
// --node the certificate's first name is the node id, and without a
// certificate the host name.
func TestNodeIDFromCertificate(t *testing.T) {
	names := []string{"runedge-1", "spiffe://fleet/host/1"}
	if id, err := nodeID("", names); err != nil || id != "runedge-1" {
		t.Fatalf("default: %q %v", id, err)
	}
	if id, err := nodeID("spiffe://fleet/host/1", names); err != nil || id != "spiffe://fleet/host/1" {
		t.Fatalf("a SAN: %q %v", id, err)
	}
	if _, err := nodeID("runedge-2", names); err == nil || !strings.Contains(err.Error(), "--node") {
		t.Fatalf("another node's id: %v", err)
	}
	host, _ := os.Hostname()
	if id, err := nodeID("", nil); err != nil || id != host {
		t.Fatalf("plaintext: %q %v, want the host name", id, err)
	}
}

// TestServeRefusesBadXDSFlags: `serve --xds` without mutual TLS files or
// --xds-insecure, or with both, refuses to start.
func TestServeRefusesBadXDSFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--listen", "127.0.0.1:0", "--xds", "127.0.0.1:1"}, "--xds needs --xds-ca, --xds-cert and --xds-key"},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--xds", "127.0.0.1:1", "--xds-ca", "ca.pem", "--xds-insecure"}, "exclude each other"},
	} {
		if code, _, errOut := run(t, c.args...); code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: %d %s, want %q", c.args, code, errOut, c.want)
		}
	}
}
