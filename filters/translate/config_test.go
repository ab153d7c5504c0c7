package translate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/filters/translate"
	"github.com/runedge/runedge/internal/confval"
)

// sse_keepalive: unset is the default, 0 disables, a value is kept; too
// short or negative names the field.
func TestKeepaliveConfig(t *testing.T) {
	var k translate.KeepaliveConfig
	k.Defaults()
	if k.KeepaliveInterval() != translate.DefaultSSEKeepalive {
		t.Errorf("unset: %v", k.KeepaliveInterval())
	}
	for _, tc := range []struct {
		d    time.Duration
		want time.Duration
		err  string
	}{
		{0, 0, ""},
		{5 * time.Second, 5 * time.Second, ""},
		{time.Millisecond, 0, "limits.sse_keepalive: 1ms is too short"},
		{-time.Second, 0, "limits.sse_keepalive: must not be negative"},
	} {
		d := confval.Dur(tc.d)
		k := translate.KeepaliveConfig{SSEKeepalive: &d}
		err := k.Validate("limits")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: got %v, want %q", tc.d, err, tc.err)
			}
			continue
		}
		if err != nil || k.KeepaliveInterval() != tc.want {
			t.Errorf("%v: %v %v, want %v", tc.d, k.KeepaliveInterval(), err, tc.want)
		}
	}
}

// stream_window: unset is the default (so is 0s in the file: a zero
// Duration reads as unset, as before the move), a value is kept, negative
// names the field.
func TestWindowConfig(t *testing.T) {
	var w translate.WindowConfig
	w.Defaults()
	if w.StreamWindow.Std() != translate.DefaultStreamWindow {
		t.Errorf("default: %v", w.StreamWindow.Std())
	}
	w = translate.WindowConfig{StreamWindow: confval.Dur(time.Second)}
	w.Defaults()
	if w.StreamWindow.Std() != time.Second {
		t.Errorf("set value overwritten: %v", w.StreamWindow.Std())
	}
	w = translate.WindowConfig{StreamWindow: confval.Dur(-time.Second)}
	if err := w.Validate("plugins"); err == nil || !strings.Contains(err.Error(), "plugins.stream_window: must not be negative") {
		t.Errorf("negative: %v", err)
	}
}
