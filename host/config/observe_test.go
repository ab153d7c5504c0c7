package config

import (
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/translate"
)

// limits.sse_keepalive: unset is the default, 0s disables, a value is
// kept, and nonsense names the field; log.format accepts text and json.
func TestObservabilityFields(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want time.Duration
		err  string
	}{
		{"listen: 127.0.0.1:1\n", translate.DefaultSSEKeepalive, ""},
		{"limits:\n  sse_keepalive: 0s\n", 0, ""},
		{"limits:\n  sse_keepalive: 5s\nlog:\n  format: json\n", 5 * time.Second, ""},
		{"limits:\n  sse_keepalive: soon\n", 0, "limits.sse_keepalive"},
		{"limits:\n  sse_keepalive: 1ms\n", 0, "limits.sse_keepalive"},
		{"log:\n  format: xml\n", 0, "log.format"},
	} {
		c, err := Parse([]byte(tc.yaml))
		if err == nil {
			err = c.Validate()
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want one naming %s", tc.yaml, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.yaml, err)
			continue
		}
		if got := c.Limits.KeepaliveInterval(); got != tc.want {
			t.Errorf("%q: keepalive %v, want %v", tc.yaml, got, tc.want)
		}
	}
}
