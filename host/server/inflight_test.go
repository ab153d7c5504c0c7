package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runedge/runedge/host/config"
)

// heldUpstream is an OpenAI-compatible upstream on 127.0.0.1 that reads
// and drops each request body, and holds its (whole) answer until release
// is closed or the call goes away; a
// request that says "warm up" is answered at once. It
// keeps nothing of what it was sent, so the heap holds only what runedge
// keeps.
type heldUpstream struct {
	arrived atomic.Int64
	release chan struct{}
	once    sync.Once
}

func newHeldUpstream(t testing.TB) (*heldUpstream, string) {
	u := &heldUpstream{release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "warm up") {
			wholeOf("warm")(w, r)
			return
		}
		b = nil
		u.arrived.Add(1)
		select {
		case <-u.release:
		case <-r.Context().Done():
			return
		}
		wholeOf("done")(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(u.free)
	return u, srv.URL + "/v1"
}

func (u *heldUpstream) free() { u.once.Do(func() { close(u.release) }) }

// waitArrived waits until n provider calls reached the upstream.
func (u *heldUpstream) waitArrived(t testing.TB, n int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for u.arrived.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d provider calls reached the upstream", u.arrived.Load(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// heapInUse is the live heap after two collections.
func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestBackgroundRunsBounded: with the default limits, of 100 background
// requests of 1 MB each only limits.max_background are admitted, and each
// admitted run keeps one copy of its input (the provider call's) while it
// waits on the upstream: the heap grows by at most that.
func TestBackgroundRunsBounded(t *testing.T) {
	up, base := newHeldUpstream(t)
	h := start(t, viaOpenAI(base, nil))
	payload := strings.Repeat("a", 1_000_000)
	reqBody := `{"model":"service","background":true,"input":"` + payload + `"}`
	// Warm up: plugin instances, connections, the store's caches.
	for range 2 {
		if res := h.do("POST", "/v1/responses", `{"model":"service","input":"warm up"}`); res.StatusCode != 200 {
			t.Fatalf("warm-up: %d %s", res.StatusCode, body(t, res))
		} else {
			body(t, res)
		}
	}
	up.arrived.Store(0)
	before := heapInUse()
	const n = 100
	admitted, refused := 0, 0
	for i := range n {
		res := h.do("POST", "/v1/responses", reqBody, "x-service-tenant-id", fmt.Sprintf("t%d", i%10))
		b := body(t, res)
		switch res.StatusCode {
		case 200:
			admitted++
		case http.StatusServiceUnavailable, http.StatusTooManyRequests:
			refused++
			if res.Header.Get("Retry-After") == "" {
				t.Fatalf("refusal %d without Retry-After: %s", res.StatusCode, b)
			}
		default:
			t.Fatalf("request %d: %d %.300s", i, res.StatusCode, b)
		}
	}
	up.waitArrived(t, int64(admitted))
	grown := int64(heapInUse()) - int64(before)
	t.Logf("%d admitted, %d refused; heap grew %.1f MB (%.0f KB per admitted run)",
		admitted, refused, float64(grown)/1e6, float64(grown)/1e3/float64(max(admitted, 1)))
	if admitted >= n {
		t.Errorf("all %d background runs admitted at once: the default limits do not bound them", n)
	}
	// A waiting run keeps one copy of its input: the provider's request,
	// for a retry. Not the client's body, the mapped request, the recorded
	// JSON or the agent's messages besides.
	perRun := int64(len(payload)) * 5 / 4
	if admitted > 0 && grown/int64(admitted) > perRun {
		t.Errorf("each background run holds %d bytes of its %d-byte input; want at most %d", grown/int64(admitted), len(payload), perRun)
	}
	if limit := int64(config.DefaultMaxBackground) * perRun; grown > limit {
		t.Errorf("heap grew %d bytes holding %d background runs; want under %d", grown, admitted, limit)
	}
	up.free()
}

// TestUnboundTokenCannotTakeEverySlot: an unbound token naming a fresh
// tenant for each run is held to limits.max_in_flight_per_token, so
// another token's tenant is still served.
func TestUnboundTokenCannotTakeEverySlot(t *testing.T) {
	up, base := newHeldUpstream(t)
	h := start(t, func(c *config.Config) {
		viaOpenAI(base, nil)(c)
		c.Limits.MaxInFlight, c.Limits.MaxInFlightPerTenant, c.Limits.MaxInFlightPerToken = 8, 2, 4
	})
	refused := 0 // 429: the token's cap; 503 (today): the global one
	for i := range 12 {
		res := h.do("POST", "/v1/responses", `{"model":"service","background":true,"input":"hold"}`,
			"x-service-tenant-id", fmt.Sprintf("fresh-%d", i))
		b := body(t, res)
		switch res.StatusCode {
		case 200:
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			refused++
		default:
			t.Fatalf("fresh tenant %d: %d %s", i, res.StatusCode, b)
		}
	}
	up.waitArrived(t, int64(12-refused))
	// Another token's tenant is served, while the first token's runs still
	// hold their slots.
	res := h.do("POST", "/v1/responses", `{"model":"service","background":true,"input":"mine"}`, "Authorization", "Bearer "+tokAcme)
	if b := body(t, res); res.StatusCode != 200 {
		t.Fatalf("tenant acme while another token ran %d runs: %d %s", 12-refused, res.StatusCode, b)
	}
	res = h.do("POST", "/v1/responses", `{"model":"service","background":true,"input":"more"}`, "x-service-tenant-id", "fresh-x")
	if b := body(t, res); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the unbound token past its cap: %d %s", res.StatusCode, b)
	} else {
		wantCode(t, b, "rate_limit_exceeded")
	}
	up.free()
}

// wantCode checks an OpenAI error body's code.
func wantCode(t testing.TB, b []byte, code string) {
	t.Helper()
	if !strings.Contains(string(b), `"code":"`+code+`"`) {
		t.Fatalf("want error code %s: %s", code, b)
	}
}
