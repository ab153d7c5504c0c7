package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/runedge/runedge/internal/cputime"
)

// BenchmarkSocketTurn: CPU per turn (cpu-ns/op: getrusage of the whole
// process, server and client, both in process as BenchmarkEndpoint's) of
// the same turn (offline provider, SQLite file, default mapping) over an
// open WebSocket and over POST /v1/responses on a keep-alive connection,
// in the same run, on the same server: stream true and false, store true
// and false. The socket answers every turn with events (a socket has no
// other reply), so stream:false compares its events with POST's one JSON
// body. The last path element is the transport, so that
//
//	benchstat -col /transport out.txt
//
// quotes socket against post per variant. Each measurement starts after
// warm-up turns and a GC, so neither pays for the other's garbage or for
// opening its connection.
func BenchmarkSocketTurn(b *testing.B) {
	h := start(b, nil)
	for _, stream := range []string{"true", "false"} {
		for _, store := range []string{"true", "false"} {
			fields := `"model":"service","input":"Hello there runedge","store":` + store + `,"stream":` + stream
			name := "stream=" + stream + "/store=" + store + "/transport="
			b.Run(name+"post", func(b *testing.B) {
				benchPost(b, h.URL, `{`+fields+`}`)
			})
			b.Run(name+"socket", func(b *testing.B) {
				benchSocket(b, h.URL, []byte(`{"type":"response.create",`+fields+`}`))
			})
		}
	}
}

// benchWarmup is the turns each transport runs before it is measured.
const benchWarmup = 20

func benchPost(b *testing.B, base, body string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer client.CloseIdleConnections()
	for range benchWarmup {
		if err := benchDo(client, "POST", base+"/v1/responses", body); err != nil {
			b.Fatal(err)
		}
	}
	measureTurns(b, func() error { return benchDo(client, "POST", base+"/v1/responses", body) })
}

func benchSocket(b *testing.B, base string, event []byte) {
	turn := socketTurner(b, base, event)
	for range benchWarmup {
		if err := turn(); err != nil {
			b.Fatal(err)
		}
	}
	measureTurns(b, turn)
}

// socketTurner opens a socket and returns a func that runs event as one
// turn on it, to its response.completed.
func socketTurner(b *testing.B, base string, event []byte) func() error {
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, strings.Replace(base, "http", "ws", 1)+"/v1/responses",
		&websocket.DialOptions{HTTPHeader: bearer(tokApp)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.CloseNow() })
	buf := new(bytes.Buffer)
	return func() error {
		if err := c.Write(ctx, websocket.MessageText, event); err != nil {
			return err
		}
		return readTurn(ctx, c, buf)
	}
}

// BenchmarkSocketTurnPaired is BenchmarkSocketTurn's comparison with the
// two transports interleaved: each op is a block of pairBlock turns over
// POST then as many over the socket, the process's CPU read around each
// block. A shared machine's load changes over seconds, which separate
// benchmarks see as a difference between transports; blocks of a few
// milliseconds see the same load. It reports the CPU per turn of each
// transport and socket/post, their ratio over the whole run.
func BenchmarkSocketTurnPaired(b *testing.B) {
	h := start(b, nil)
	for _, stream := range []string{"true", "false"} {
		for _, store := range []string{"true", "false"} {
			fields := `"model":"service","input":"Hello there runedge","store":` + store + `,"stream":` + stream
			b.Run("stream="+stream+"/store="+store, func(b *testing.B) {
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
				defer client.CloseIdleConnections()
				post := func() error { return benchDo(client, "POST", h.URL+"/v1/responses", `{`+fields+`}`) }
				socket := socketTurner(b, h.URL, []byte(`{"type":"response.create",`+fields+`}`))
				var cpu [2]time.Duration
				block := func(i int, turn func() error) {
					c0 := cputime.Process()
					for range pairBlock {
						if err := turn(); err != nil {
							b.Fatal(err)
						}
					}
					cpu[i] += cputime.Process() - c0
				}
				for range benchWarmup / pairBlock {
					block(0, post)
					block(1, socket)
				}
				cpu = [2]time.Duration{}
				runtime.GC()
				b.ReportAllocs()
				for b.Loop() {
					block(0, post)
					block(1, socket)
				}
				turns := float64(b.N * pairBlock)
				b.ReportMetric(float64(cpu[0])/turns, "post-cpu-ns/turn")
				b.ReportMetric(float64(cpu[1])/turns, "socket-cpu-ns/turn")
				b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "socket/post-cpu")
			})
		}
	}
}

// pairBlock is the turns of a transport in a row in
// BenchmarkSocketTurnPaired.
const pairBlock = 10

// measureTurns runs turn b.N times and reports the process's CPU per turn
// and the allocations.
func measureTurns(b *testing.B, turn func() error) {
	runtime.GC()
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		if err := turn(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cputime.Process()-cpu0)/float64(b.N), "cpu-ns/op")
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
