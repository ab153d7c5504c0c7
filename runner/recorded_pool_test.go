package runner_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/runedge/runedge/runner"
)

// TestPooledRecordedRequestsStayTheirOwn runs agent-sized requests from
// many goroutines at once, each with texts of its own (and some sharing a
// session's prefix, so the store keeps them by reference), and reads every
// run's recorded request back: each must be its own request, byte for byte.
// Start writes a large recorded request into a buffer a run before gave
// back (recordedPool); a buffer given back while the store's group commit
// still read it would store another request's bytes here.
func TestPooledRecordedRequestsStayTheirOwn(t *testing.T) {
	e := newEnv(t)
	const workers, turns = 12, 6
	type done struct {
		id   string
		want []byte
	}
	var mu sync.Mutex
	var runs []done
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			var input []runner.Message
			for turn := range turns {
				// 40 texts of about 600 bytes: 24 KB, over SharedRequestMin;
				// worker w's texts differ from every other worker's.
				for i := range 40 {
					text := fmt.Sprintf("worker %d turn %d text %d: %s \"quoted\" \\ <tag> é", w, turn, i,
						strings.Repeat(string(rune('a'+(w+i)%26)), 560+w))
					input = append(input, runner.Message{Role: "user", Content: text})
				}
				if w%2 == 0 {
					input = input[len(input)-40:] // a fresh request each turn
				}
				sp := spec("", false)
				sp.Request.Input = append([]runner.Message(nil), input...)
				want, err := json.Marshal(&sp.Request)
				if err != nil {
					errs <- err
					return
				}
				h, err := e.svc.Start(t.Context(), sp)
				if err != nil {
					errs <- err
					return
				}
				if _, _, err := finish(h); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				runs = append(runs, done{h.Run().ID, want})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, r := range runs {
		if got := e.get(t, r.id).Request; !bytes.Equal(got, r.want) {
			t.Fatalf("run %s recorded\n%.300s…\nwant\n%.300s…", r.id, got, r.want)
		}
	}
}
