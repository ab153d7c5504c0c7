package server

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runedge/runedge/host/config/configtest"
)

// TestBytesInFlightGivenBackOnceSent: a request's bytes in flight
// (limits.max_bytes_in_flight) are given back once its upstream request
// is written, not when the model answers. With a bound that holds one
// body, a second request reaches the upstream while the first is still
// waiting for its answer, streamed or not, and the gauge reads 0 while
// both wait; both are then answered.
func TestBytesInFlightGivenBackOnceSent(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run("stream="+strconv.FormatBool(stream), func(t *testing.T) {
			answer := make(chan struct{})
			var once sync.Once
			open := func() { once.Do(func() { close(answer) }) }
			up := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
				<-answer // the model takes its time
				wholeOf("ok")(w, r)
			})
			t.Cleanup(open) // before the upstream closes (cleanups run last first)
			body := func(word string) string {
				return `{"model":"service","stream":` + strconv.FormatBool(stream) +
					`,"messages":[{"role":"user","content":"` + strings.Repeat(word+" ", 2000) + `"}]}`
			}
			first, second := body("first"), body("other")
			doc := "limits: {max_bytes_in_flight: " + strconv.Itoa(len(first)+100) + ", bytes_in_flight_wait: 20s}\n" +
				"provider: {kind: openai, openai: {base_url: " + up.srv.URL + "/v1, model: m, max_attempts: 1}}"
			h := serveConfig(t, loadFile(t, configtest.New(t), doc))

			codes := make(chan int, 2)
			send := func(b string) {
				req, _ := http.NewRequest("POST", h.URL+"/v1/chat/completions", strings.NewReader(b))
				req.Header.Set("Authorization", "Bearer "+tokApp)
				req.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					codes <- 0
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				codes <- res.StatusCode
			}
			go send(first)
			eventually(t, "the first request at the upstream", func() bool { return len(up.requests()) == 1 })
			go send(second)
			// On a bound that covers the model's answer too, the second
			// waits the 20 s out and is refused: never at the upstream.
			eventually(t, "the second request at the upstream while the first waits for its answer",
				func() bool { return len(up.requests()) == 2 })
			if got, _ := sample(t, h.scrape(tokAdmin), "runedge_request_bytes_in_flight"); got != 0 {
				t.Errorf("runedge_request_bytes_in_flight = %v while both wait for the model, want 0", got)
			}
			open()
			for range 2 {
				select {
				case c := <-codes:
					if c != http.StatusOK {
						t.Errorf("a request answered %d, want 200", c)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("a request not answered within 10 s of the model's answer")
				}
			}
		})
	}
}
