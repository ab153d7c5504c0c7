package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// load drives one target with conns concurrent clients for d (after a
// warm-up), each sending the next request as soon as the last one's body
// is read to the end.
type load struct {
	url, token string
	body       []byte
	conns      int
	warmup, d  time.Duration
}

type loadResult struct {
	requests  int
	errors    int
	elapsed   time.Duration
	latencies []time.Duration // sorted
	// cpuPerReq is the server's CPU per request, when the caller read it
	// (the upstream's, for the bare-handler baseline).
	cpuPerReq time.Duration
}

func (l load) run(ctx context.Context, onStart, onEnd func()) loadResult {
	tr := &http.Transport{MaxIdleConnsPerHost: l.conns, MaxConnsPerHost: l.conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	one := func() (time.Duration, bool) {
		req, _ := http.NewRequestWithContext(ctx, "POST", l.url, bytes.NewReader(l.body))
		req.Header.Set("Content-Type", "application/json")
		if l.token != "" {
			req.Header.Set("Authorization", "Bearer "+l.token)
		}
		began := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, false
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return time.Since(began), err == nil && res.StatusCode == 200
	}
	// Warm up: connections open, caches and pools filled.
	var wg sync.WaitGroup
	until := time.Now().Add(l.warmup)
	for range l.conns {
		wg.Go(func() {
			for time.Now().Before(until) {
				one()
			}
		})
	}
	wg.Wait()

	var mu sync.Mutex
	res := loadResult{}
	onStart()
	began := time.Now()
	until = began.Add(l.d)
	for range l.conns {
		wg.Go(func() {
			var lat []time.Duration
			errs := 0
			for time.Now().Before(until) {
				d, ok := one()
				if !ok {
					errs++
					continue
				}
				lat = append(lat, d)
			}
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			res.errors += errs
			mu.Unlock()
		})
	}
	wg.Wait()
	res.elapsed = time.Since(began)
	onEnd()
	res.requests = len(res.latencies)
	slices.Sort(res.latencies)
	return res
}

func (r loadResult) pct(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(float64(len(r.latencies)-1) * p)
	return r.latencies[i]
}

func (r loadResult) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }
