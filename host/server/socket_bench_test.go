package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// BenchmarkSocketTurn: CPU per turn (server and client, cpu-ns/op) of the
// same streamed turn over an open WebSocket and over POST /v1/responses
// (keep-alive), in the same run; store on and off. Quote the ratio.
func BenchmarkSocketTurn(b *testing.B) {
	h := start(b, nil)
	for _, store := range []string{"true", "false"} {
		body := `{"model":"service","input":"Hello there runedge","store":` + store + `,"stream":true}`
		b.Run("post/store="+store, func(b *testing.B) {
			benchRequests(b, h.URL, "POST", "/v1/responses", body)
		})
		b.Run("socket/store="+store, func(b *testing.B) {
			ctx := context.Background()
			c, _, err := websocket.Dial(ctx, strings.Replace(h.URL, "http", "ws", 1)+"/v1/responses",
				&websocket.DialOptions{HTTPHeader: bearer(tokApp)})
			if err != nil {
				b.Fatal(err)
			}
			defer c.CloseNow()
			event := []byte(`{"type":"response.create","model":"service","input":"Hello there runedge","store":` + store + `}`)
			buf := new(bytes.Buffer)
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				if err := c.Write(ctx, websocket.MessageText, event); err != nil {
					b.Fatal(err)
				}
				if err := readTurn(ctx, c, buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// readTurn reads a turn's events into buf, as cheaply as an HTTP client
// reads a body, until response.completed.
func readTurn(ctx context.Context, c *websocket.Conn, buf *bytes.Buffer) error {
	for {
		_, r, err := c.Reader(ctx)
		if err != nil {
			return err
		}
		buf.Reset()
		if _, err := io.Copy(buf, r); err != nil {
			return err
		}
		msg := buf.Bytes()
		switch {
		case bytes.HasPrefix(msg, []byte(`{"type":"response.completed"`)):
			return nil
		case bytes.HasPrefix(msg, []byte(`{"type":"error"`)), bytes.HasPrefix(msg, []byte(`{"type":"response.failed"`)):
			return errors.New(string(msg))
		}
	}
}
