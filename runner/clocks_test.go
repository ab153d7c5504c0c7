package runner_test

import (
	"encoding/base32"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner"
)

// A run's start is one clock read (Service.clocks): its id's time, its
// created_at, its handle's start and its timeout's deadline are the same
// instant, so the deadline is exactly run_timeout after the start the
// run's duration is measured from (each was a read of its own, the
// deadline's the latest); its end, read once too, is not before its
// start, and its duration is measured from that start.
func TestRunStartTimesAreOneClockRead(t *testing.T) {
	const timeout = time.Hour
	e := newEnv(t, withConfig(func(c *runner.ServiceConfig) { c.RunTimeout = timeout }))
	h, err := e.svc.Start(t.Context(), spec("hello", false))
	if err != nil {
		t.Fatal(err)
	}
	begun := runner.HandleBegun(h)
	deadline, ok := runner.HandleDeadline(h)
	if !ok {
		t.Fatal("the run's context has no deadline")
	}
	if got := deadline.Sub(begun); got != timeout {
		t.Errorf("deadline - start = %v, want run_timeout %v exactly", got, timeout)
	}
	r := h.Run()
	if got := idMillis(t, r.ID); got != begun.UnixMilli() {
		t.Errorf("id's time %d ms, start %d ms: want the same instant", got, begun.UnixMilli())
	}
	if r.CreatedAt != begun.Unix() || r.StartedAt == nil || *r.StartedAt != r.CreatedAt {
		t.Errorf("created_at %d, started_at %v, start %d s: want the same second", r.CreatedAt, r.StartedAt, begun.Unix())
	}
	if _, _, err := finish(h); err != nil {
		t.Fatal(err)
	}
	ended := e.get(t, r.ID)
	if ended.EndedAt == nil || *ended.EndedAt < ended.CreatedAt {
		t.Fatalf("ended_at %v before created_at %d", ended.EndedAt, ended.CreatedAt)
	}
	if ended.DurationMs == nil || *ended.DurationMs < 0 || *ended.DurationMs > time.Since(begun).Milliseconds() {
		t.Fatalf("duration_ms %v, not within the %v since the start", ended.DurationMs, time.Since(begun))
	}
}

// idMillis is the creation time, in Unix milliseconds, an id carries in
// its first 48 bits (runner.NewID).
func idMillis(t *testing.T, id string) int64 {
	t.Helper()
	body := strings.TrimPrefix(id, contract.RunPrefix)
	b, err := base32.HexEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(body))
	if err != nil || len(b) != 20 {
		t.Fatalf("id %q: %v", id, err)
	}
	return int64(binary.BigEndian.Uint16(b[0:2]))<<32 | int64(binary.BigEndian.Uint32(b[2:6]))
}
