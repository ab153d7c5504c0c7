package telemetry

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// Access lines are buffered, as Envoy buffers its access log
// (access_log_flush_interval): a write(2) per request was a measurable
// share of a small request's CPU (RATIONALE.md, "The access log,
// buffered"). The run history is the durable record of every request; the
// access log is for people and log shippers, who lose at most the last
// AccessFlushInterval of lines when the process dies without closing its
// LogOutput.
const (
	// AccessFlushInterval is the longest an access line waits in memory.
	AccessFlushInterval = time.Second
	// AccessBufferBytes is how much the buffer holds before it is written
	// at once.
	AccessBufferBytes = 64 << 10
)

// LogOutput is the process log's one stream (standard error) with the
// access log's lines held in a buffer and every other line written at
// once. Both kinds go out under one lock, and a direct line first writes
// the buffered ones ahead of it, so lines are never torn and keep their
// order: a warning is never read before the access lines logged before it.
type LogOutput struct {
	mu       sync.Mutex
	out      io.Writer
	buf      []byte
	limit    int
	interval time.Duration
	timer    *time.Timer // armed while buf holds lines
	closed   bool
}

// NewLogOutput buffers the access lines written to out for at most
// interval or until limit bytes wait (AccessFlushInterval,
// AccessBufferBytes in production; tests choose).
func NewLogOutput(out io.Writer, interval time.Duration, limit int) *LogOutput {
	o := &LogOutput{out: out, limit: limit, interval: interval}
	o.timer = time.AfterFunc(time.Hour, func() { o.Flush() })
	o.timer.Stop()
	return o
}

// Handler returns the process log's handler: newHandler (slog's text or
// JSON handler) over this output, its access lines (AccessLog) buffered.
func (o *LogOutput) Handler(newHandler func(io.Writer) slog.Handler) slog.Handler {
	return accessSplit{direct: newHandler(directWriter{o}), access: newHandler(bufferedWriter{o})}
}

// TextHandler is Handler with slog's TextHandler (no options); AccessLog
// appends its lines by hand in the same format.
func (o *LogOutput) TextHandler() slog.Handler {
	h := o.Handler(func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) }).(accessSplit)
	h.o, h.line = o, lineText
	return h
}

// JSONHandler is Handler with slog's JSONHandler (no options); AccessLog
// appends its lines by hand in the same format.
func (o *LogOutput) JSONHandler() slog.Handler {
	h := o.Handler(func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) }).(accessSplit)
	h.o, h.line = o, lineJSON
	return h
}

// Flush writes the buffered lines now.
func (o *LogOutput) Flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushLocked()
}

// Close writes the buffered lines and stops buffering: later access lines
// are written at once. Call it when the server has stopped.
func (o *LogOutput) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushLocked()
	o.closed = true
}

func (o *LogOutput) flushLocked() {
	o.timer.Stop()
	if len(o.buf) == 0 {
		return
	}
	o.out.Write(o.buf) // standard error: nowhere to report a failure to
	o.buf = o.buf[:0]
}

func (o *LogOutput) writeBuffered(p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		o.out.Write(p)
		return
	}
	if len(o.buf)+len(p) > o.limit {
		o.flushLocked()
	}
	if len(o.buf) == 0 {
		o.timer.Reset(o.interval)
	}
	o.buf = append(o.buf, p...)
}

func (o *LogOutput) writeDirect(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flushLocked()
	return o.out.Write(p)
}

// bufferedWriter and directWriter are the two ways into a LogOutput that
// slog's handlers write whole lines to, one Write a line.
type bufferedWriter struct{ o *LogOutput }

func (w bufferedWriter) Write(p []byte) (int, error) {
	w.o.writeBuffered(p)
	return len(p), nil
}

type directWriter struct{ o *LogOutput }

func (w directWriter) Write(p []byte) (int, error) { return w.o.writeDirect(p) }

// accessKey marks the context of an access line (AccessLog), which
// accessSplit sends to its buffered handler.
type accessKey struct{}

// accessContext is ctx marked as an access line's.
type accessContext struct{ context.Context }

func (c accessContext) Value(key any) any {
	if key == (accessKey{}) {
		return true
	}
	return c.Context.Value(key)
}

// accessSplit sends access lines to one handler and all others to
// another: the same format over the two writers of one LogOutput. With
// line set (TextHandler, JSONHandler), AccessLog appends its lines to o
// by hand in that format; a handler with attributes or a group added
// leaves them to slog.
type accessSplit struct {
	direct, access slog.Handler
	o              *LogOutput
	line           lineFormat
}

func (h accessSplit) Enabled(ctx context.Context, l slog.Level) bool {
	return h.direct.Enabled(ctx, l)
}

func (h accessSplit) Handle(ctx context.Context, r slog.Record) error {
	if ctx.Value(accessKey{}) != nil {
		return h.access.Handle(ctx, r)
	}
	return h.direct.Handle(ctx, r)
}

func (h accessSplit) WithAttrs(attrs []slog.Attr) slog.Handler {
	return accessSplit{direct: h.direct.WithAttrs(attrs), access: h.access.WithAttrs(attrs)}
}

func (h accessSplit) WithGroup(name string) slog.Handler {
	return accessSplit{direct: h.direct.WithGroup(name), access: h.access.WithGroup(name)}
}
