package runner

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// agentRequest is a recorded request of about 240 KB: 400 texts of 600
// bytes, each with escapes.
func agentRequest(c byte) *Request {
	in := make([]Message, 400)
	for i := range in {
		in[i] = Message{Role: "user", Content: "line \"one\"\n" + strings.Repeat(string(c), 590)}
	}
	return &Request{Input: in}
}

// TestRecordedBuffersOutsideTheHeap: the buffers of runs waiting for their
// start to commit are not in the Go heap, where the collector's goal
// counted each twice. It fails with the buffers pooled in the heap.
func TestRecordedBuffersOutsideTheHeap(t *testing.T) {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	const runs = recordedIdle + 4
	var held [runs][]byte
	for i := range held {
		b, _, err := recordedPooled(agentRequest('a'+byte(i)), true)
		if err != nil {
			t.Fatal(err)
		}
		held[i] = b
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if grew := int64(ms.HeapAlloc) - int64(before); grew > 2<<20 {
		t.Errorf("the heap grew by %d bytes with %d recorded requests of %d bytes held", grew, runs, len(held[0]))
	}
	for i, b := range held {
		want, _ := json.Marshal(agentRequest('a' + byte(i)))
		if !bytes.Equal(b, want) {
			t.Fatalf("request %d is not its own", i)
		}
		putRecorded(b)
	}
	r := &recordedBufs
	r.mu.Lock()
	idle, mapped := len(r.idle), len(r.mapped)
	r.mu.Unlock()
	if idle != recordedIdle || mapped != recordedIdle {
		t.Errorf("%d buffers idle and %d mapped after %d given back, want %d of each", idle, mapped, runs, recordedIdle)
	}
	// A given-back buffer serves the next request.
	b, _, _ := recordedPooled(agentRequest('z'), true)
	r.mu.Lock()
	idle = len(r.idle)
	r.mu.Unlock()
	if idle != recordedIdle-1 {
		t.Errorf("%d buffers idle while one is in use, want %d", idle, recordedIdle-1)
	}
	putRecorded(b)
}

// TestRecordedOutgrowsItsBuffer: a request with more escapes than its
// buffer was sized for is copied out of it, and the buffer goes back
// rather than staying mapped with nobody to give it back.
func TestRecordedOutgrowsItsBuffer(t *testing.T) {
	in := make([]Message, 40)
	for i := range in {
		in[i] = Message{Role: "user", Content: strings.Repeat("<", 1000)} // \u003c: six bytes each
	}
	req := &Request{Input: in}
	r := &recordedBufs
	r.mu.Lock()
	mapped := len(r.mapped)
	r.mu.Unlock()
	b, _, err := recordedPooled(req, true)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(req)
	if !bytes.Equal(b, want) {
		t.Fatal("the request differs from json.Marshal's")
	}
	putRecorded(b) // a heap slice: left to the collector
	r.mu.Lock()
	after := len(r.mapped)
	r.mu.Unlock()
	if after > max(mapped, recordedIdle) {
		t.Errorf("%d buffers mapped after the request outgrew one, was %d", after, mapped)
	}
	for _, b := range r.idle {
		if len(b) != 0 {
			t.Fatal("an idle buffer is not empty")
		}
	}
}

// BenchmarkRecordedPooled writes an agent-sized recorded request into a
// reused buffer and gives it back, with nine held at once as at 32
// connections (runs waiting for their start to commit).
func BenchmarkRecordedPooled(b *testing.B) {
	req := agentRequest('a')
	b.ReportAllocs()
	b.SetBytes(240 << 10)
	var held [9][]byte
	i := 0
	for b.Loop() {
		if held[i] != nil {
			putRecorded(held[i])
		}
		held[i], _, _ = recordedPooled(req, true)
		i = (i + 1) % len(held)
	}
	for _, h := range held {
		putRecorded(h)
	}
}
