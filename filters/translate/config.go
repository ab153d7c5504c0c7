package translate

import (
	"time"

	"github.com/runedge/runedge/internal/confval"
)

// KeepaliveConfig is the stage's part of the limits section of the
// configuration file (host/config inlines it there).
type KeepaliveConfig struct {
	// SSEKeepalive is how often a stream that has nothing to send writes a
	// ": keepalive" comment (nil: DefaultSSEKeepalive; 0 disables).
	SSEKeepalive *confval.Duration `yaml:"sse_keepalive"`
}

// WindowConfig is the stage's part of the plugins section.
type WindowConfig struct {
	// StreamWindow batches streamed text for plugins that export
	// map_stream: at most one call per window (0 = one call per arrival).
	StreamWindow confval.Duration `yaml:"stream_window"`
}

// Defaults of the stage's fields.
const (
	// DefaultSSEKeepalive stays well inside the 60 s idle timeout of
	// common load balancers.
	DefaultSSEKeepalive = 15 * time.Second
	DefaultStreamWindow = 20 * time.Millisecond
	// minKeepalive is the shortest keepalive accepted: a comment every few
	// milliseconds would be a stream of its own.
	minKeepalive = 100 * time.Millisecond
)

// Defaults does nothing: an unset keepalive (nil) is read as the default
// by KeepaliveInterval, so that 0 can mean off.
func (*KeepaliveConfig) Defaults() {}

// Validate reports a bad keepalive, named under path (the section).
func (k *KeepaliveConfig) Validate(path string) error {
	p := confval.At(path)
	if k.SSEKeepalive != nil {
		if msg := k.SSEKeepalive.Check(); msg != "" {
			p.Add("sse_keepalive", "%s", msg)
		} else if d := k.SSEKeepalive.Std(); d > 0 && d < minKeepalive {
			p.Add("sse_keepalive", "%s is too short (at least %s, or 0 to disable)", d, minKeepalive)
		}
	}
	return p.Err()
}

// KeepaliveInterval is sse_keepalive with its default applied: the
// Keepalive option of New (0 disables keepalives).
func (k KeepaliveConfig) KeepaliveInterval() time.Duration {
	if k.SSEKeepalive == nil {
		return DefaultSSEKeepalive
	}
	return k.SSEKeepalive.Std()
}

// Defaults fills the window when unset.
func (w *WindowConfig) Defaults() {
	if w.StreamWindow == (confval.Duration{}) {
		w.StreamWindow = confval.Dur(DefaultStreamWindow)
	}
}

// Validate reports a bad window, named under path (the section).
func (w *WindowConfig) Validate(path string) error {
	p := confval.At(path)
	p.Duration("stream_window", w.StreamWindow)
	return p.Err()
}
