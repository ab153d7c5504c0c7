package server

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// heapWatch samples the heap in use until stop, and reports its peak
// growth over the start and the bytes allocated meanwhile: a request's
// cost in memory, measured on the server in this process.
type heapWatch struct {
	base, alloc0 uint64
	peak         uint64
	stop         chan struct{}
	wg           sync.WaitGroup
}

func watchHeap() *heapWatch {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	w := &heapWatch{base: m.HeapInuse, alloc0: m.TotalAlloc, peak: m.HeapInuse, stop: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			w.peak = max(w.peak, m.HeapInuse)
			select {
			case <-w.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return w
}

// done returns the peak heap growth and the bytes allocated, in MiB.
func (w *heapWatch) done() (peak, alloc float64) {
	close(w.stop)
	w.wg.Wait()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(w.peak-w.base) / (1 << 20), float64(m.TotalAlloc-w.alloc0) / (1 << 20)
}

// bigResponse stores a response whose input and output hold about n
// bytes each, and returns its id and output message id.
func bigResponse(t *testing.T, h *harness, n int, prev string) (id, out string) {
	t.Helper()
	req := fmt.Sprintf(`{"model":"service","input":%q}`, strings.Repeat("abcdefg ", n/8))
	if prev != "" {
		req = req[:len(req)-1] + `,"previous_response_id":"` + prev + `"}`
	}
	res := h.do("POST", "/v1/responses", req)
	b := body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("storing a %d-byte response: %d %.300s", n, res.StatusCode, b)
	}
	return gjson.GetBytes(b, "id").Str, gjson.GetBytes(b, "output.0.id").Str
}

// TestReferencesBounded: a 7 KB body of 100 references to one stored
// 700 KB message is refused with 400 naming the reference that crossed
// limits.history.max_reference_bytes (4 MiB), at once and without
// resolving its way there in memory; more references than
// limits.history.max_references (256) are refused naming input; and what
// is accepted is stored as references: the stored input does not grow by
// what they name, and input_items lists them as item_reference.
func TestReferencesBounded(t *testing.T) {
	h := start(t, nil)
	_, out := bigResponse(t, h, 700<<10, "")
	refs := func(n int, id string) string {
		items := make([]string, n)
		for i := range items {
			items[i] = `{"type":"item_reference","id":"` + id + `"}`
		}
		return `{"model":"service","input":[` + strings.Join(items, ",") + `]}`
	}
	// Memory, not time, is the measure: the bytes a request makes the
	// server hold and allocate do not depend on the machine's load.
	w := watchHeap()
	res := h.do("POST", "/v1/responses", refs(100, out))
	peak, alloc := w.done()
	t.Logf("100 references to a 700 KB message: %d, peak heap +%.1f MiB, %.1f MiB allocated", res.StatusCode, peak, alloc)
	apiError(t, res, 400, "invalid_body", "input[5]")
	if peak > 40 || alloc > 80 {
		t.Errorf("refusing 100 references cost %.1f MiB of heap (%.1f MiB allocated); want under 40 MiB, 80 MiB", peak, alloc)
	}

	small, _ := bigResponse(t, h, 64, "")
	smallOut := gjson.GetBytes(body(t, h.do("GET", "/v1/responses/"+small, "")), "output.0.id").Str
	apiError(t, h.do("POST", "/v1/responses", refs(257, smallOut)), 400, "invalid_body", "input")

	res = h.do("POST", "/v1/responses", refs(5, out))
	b := body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("5 references within the bounds: %d %.300s", res.StatusCode, b)
	}
	id := gjson.GetBytes(b, "id").Str
	items, err := h.srv.Runs().History().ResponseItems(context.Background(), runOf(id))
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, it := range items {
		if !it.Output {
			kept += len(it.Message.Content)
		}
	}
	if kept != 0 {
		t.Errorf("the stored input of 5 references holds %d bytes of copies", kept)
	}
	list := body(t, h.do("GET", "/v1/responses/"+id+"/input_items?order=asc", ""))
	if d := gjson.GetBytes(list, "data"); len(d.Array()) != 5 || d.Get("0.type").Str != "item_reference" || d.Get("0.id").Str != out ||
		len(list) > 4096 {
		t.Errorf("input_items of 5 references (%d bytes): %.300s", len(list), list)
	}
}

// TestReplayedHistoryBounded: previous_response_id replays earlier turns
// within limits.history.max_history_bytes (8 MiB): a chain of 1.8 MB turns
// is continued until its history passes the bound, and the turn after is
// refused with 400 naming previous_response_id, without reading the
// history into memory first. The measures are the heap it holds and the
// bytes it allocates (about 13 MiB and 33 MiB; reading the whole chain
// and mapping it held 502 MiB), which no load on the machine changes, as
// it would a wall-clock bound.
func TestReplayedHistoryBounded(t *testing.T) {
	h := start(t, nil)
	prev := ""
	for range 5 { // 5 turns of 900 KB in and out: 9 MB stored
		prev, _ = bigResponse(t, h, 900<<10, prev)
	}
	w := watchHeap()
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"and now?","previous_response_id":"`+prev+`"}`)
	peak, alloc := w.done()
	t.Logf("continuing 9 MB of turns: %d, peak heap +%.1f MiB, %.1f MiB allocated", res.StatusCode, peak, alloc)
	apiError(t, res, 400, "invalid_body", "previous_response_id")
	if peak > 40 || alloc > 80 {
		t.Errorf("refusing the replay cost %.1f MiB of heap (%.1f MiB allocated); want under 40 MiB, 80 MiB", peak, alloc)
	}
}
