package server

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/internal/cputime"
)

// A long session must not make each turn dearer: a turn's CPU should
// follow what is new in it, not everything said before. These benchmarks
// play a 200-turn session through the whole edge (real HTTP on 127.0.0.1,
// a real SQLite file, the offline provider, the built-in mapping) and
// report the process's CPU per turn (server and client, every goroutine)
// over the first 20 turns (early-cpu-ns/turn) and the last 20
// (late-cpu-ns/turn), and their ratio (late/early): 1 when history costs
// nothing per turn. One op is one whole session.
const (
	historyTurns  = 200
	historyWindow = 20
)

// historySay is a turn's user message: about 560 bytes, different every
// turn.
func historySay(turn int) string {
	s := fmt.Sprintf("Turn %d of a long session. ", turn)
	for len(s) < 560 {
		s += "Here is some more of what the user has to say about the matter at hand. "
	}
	return s[:560]
}

// BenchmarkHistoryChain continues each turn from the one before by
// previous_response_id.
func BenchmarkHistoryChain(b *testing.B) {
	h := start(b, nil)
	benchHistory(b, h, func(client *http.Client) func(turn int) error {
		prev := ""
		return func(turn int) error {
			body := `{"model":"service","input":"` + historySay(turn) + `"`
			if prev != "" {
				body += `,"previous_response_id":"` + prev + `"`
			}
			reply, err := historyPost(client, h.URL+"/v1/responses", body+"}")
			if err != nil {
				return err
			}
			prev = gjson.GetBytes(reply, "id").Str
			return nil
		}
	})
}

// BenchmarkHistoryConversation continues one conversation (the
// conversation parameter) every turn.
func BenchmarkHistoryConversation(b *testing.B) {
	h := start(b, nil)
	benchHistory(b, h, func(client *http.Client) func(turn int) error {
		reply, err := historyPost(client, h.URL+"/v1/conversations", `{}`)
		if err != nil {
			b.Fatal(err)
		}
		conv := gjson.GetBytes(reply, "id").Str
		return func(turn int) error {
			_, err := historyPost(client, h.URL+"/v1/responses",
				`{"model":"service","conversation":"`+conv+`","input":"`+historySay(turn)+`"}`)
			return err
		}
	})
}

// benchHistory plays historyTurns turns per op, each session made by
// session, and reports the CPU per turn of the early and the late window.
func benchHistory(b *testing.B, h *harness, session func(*http.Client) func(turn int) error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	// A short session first, so that the early window does not pay for
	// what the first requests of a server warm up.
	warm := session(client)
	for i := range historyWindow {
		if err := warm(i); err != nil {
			b.Fatalf("warm-up turn %d: %v", i, err)
		}
	}
	var early, late time.Duration
	for b.Loop() {
		turn := session(client)
		for i := range historyTurns {
			cpu0 := cputime.Process()
			if err := turn(i); err != nil {
				b.Fatalf("turn %d: %v", i, err)
			}
			d := cputime.Process() - cpu0
			switch {
			case i < historyWindow:
				early += d
			case i >= historyTurns-historyWindow:
				late += d
			}
		}
	}
	n := float64(b.N * historyWindow)
	b.ReportMetric(float64(early)/n, "early-cpu-ns/turn")
	b.ReportMetric(float64(late)/n, "late-cpu-ns/turn")
	b.ReportMetric(float64(late)/float64(early), "late/early")
}

// historyPost posts body with the app token and returns the reply, an error
// unless it is a 200.
func historyPost(client *http.Client, url, body string) ([]byte, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tokApp)
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	reply, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("POST %s: status %d: %.300s", url, res.StatusCode, reply)
	}
	return reply, nil
}
