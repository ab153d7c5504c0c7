package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/filters/auth"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/server/internal/socket"
	"github.com/runedge/runedge/runner"
)

// What the sockets of one host may hold: caps on how many are open, a
// byte budget per socket, an idle timeout, and the turns of a socket that
// died.

const tokOther = "tok-other" // unbound, a token of its own

func withOtherToken(c *config.Config) {
	c.Tokens = append(c.Tokens, config.Token{Name: "other", Hash: auth.HashToken(tokOther)})
}

// refusedSocket dials a socket that must be refused before the upgrade
// with status and code, Retry-After and the OpenAI error shape.
func refusedSocket(t *testing.T, h *harness, hdr http.Header, status int, code string) {
	t.Helper()
	c, res, err := rawSocket(t, h, hdr, nil)
	if err == nil {
		c.CloseNow()
		t.Fatalf("%v: upgraded, want %d", hdr, status)
	}
	if res == nil || res.StatusCode != status || res.Header.Get("Retry-After") == "" || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%v: %v %v, want %d with Retry-After", hdr, res, err, status)
	}
	b := body(t, res)
	for _, k := range []string{"message", "type", "param", "code"} {
		if !gjson.GetBytes(b, "error."+k).Exists() {
			t.Fatalf("%v: %s lacks error.%s", hdr, b, k)
		}
	}
	if gjson.GetBytes(b, "error.code").Str != code {
		t.Fatalf("%v: %s, want code %s", hdr, b, code)
	}
}

func openSocket(t *testing.T, h *harness, hdr http.Header) *websocket.Conn {
	t.Helper()
	c, res, err := rawSocket(t, h, hdr, nil)
	if err != nil {
		t.Fatalf("%v: %v %v", hdr, res, err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// Sockets are capped per token, per tenant and per host, refused before
// the upgrade (429 for a token or tenant, 503 for the host, both with
// Retry-After); a closed socket gives its slot back; at the host's cap,
// another tenant's requests and /healthz still answer; the gauge counts
// the open sockets per tenant.
func TestSocketCaps(t *testing.T) {
	h := start(t, func(c *config.Config) {
		withOtherToken(c)
		c.WebSocket.MaxSockets, c.WebSocket.MaxSocketsPerTenant, c.WebSocket.MaxSocketsPerToken = 6, 4, 3
		c.Admin.Listen = "127.0.0.1:0"
		c.Metrics.TenantLabel = true
	})
	acme := func(tok string) http.Header { return bearer(tok, "x-service-tenant-id", "acme") }
	var app []*websocket.Conn
	for i := 0; i < 3; i++ {
		app = append(app, openSocket(t, h, acme(tokApp)))
	}
	refusedSocket(t, h, acme(tokApp), 429, "rate_limit_exceeded")                                // the token's 4th
	refusedSocket(t, h, bearer(tokApp, "x-service-tenant-id", "t2"), 429, "rate_limit_exceeded") // the token's, in any tenant
	openSocket(t, h, bearer(tokAcme))                                                            // acme's 4th
	refusedSocket(t, h, bearer(tokAcme), 429, "rate_limit_exceeded")                             // acme's 5th
	openSocket(t, h, bearer(tokOther, "x-service-tenant-id", "t2"))
	openSocket(t, h, bearer(tokOther, "x-service-tenant-id", "t2"))
	refusedSocket(t, h, bearer(tokOther, "x-service-tenant-id", "t3"), 503, "unavailable") // the host's 7th

	fams := h.scrape(tokAdmin)
	if n, _ := sample(t, fams, "runedge_websockets_open", "tenant=acme"); n != 4 {
		t.Fatalf("acme's open sockets: %v", n)
	}
	if n, _ := sample(t, fams, "runedge_websockets_open", "tenant=other"); n != 2 {
		t.Fatalf("t2's open sockets (labelled other): %v", n)
	}
	// At the host's cap, another tenant is served and the host is healthy.
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"still served"}`, "Authorization", "Bearer "+tokOther, "x-service-tenant-id", "t3")
	if b := body(t, res); res.StatusCode != 200 || gjson.GetBytes(b, "output_text").Str != "You said: still served" {
		t.Fatalf("another tenant at the host's socket cap: %d %s", res.StatusCode, b)
	}
	if res := h.do("GET", "/healthz", ""); res.StatusCode != 200 {
		t.Fatalf("/healthz at the host's socket cap: %d", res.StatusCode)
	} else {
		res.Body.Close()
	}
	// A socket closed gives its slot back (to its token, tenant and host).
	app[0].Close(websocket.StatusNormalClosure, "bye")
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, _, err := rawSocket(t, h, acme(tokApp), nil)
		if err == nil {
			c.CloseNow()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed socket's slot was not given back: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// heapAfterGC is the live heap after a full collection.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	for i := 0; i < 2; i++ {
		runtime.GC()
	}
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// idleSocketBytes bounds what an idle socket holds after a turn: its
// spare buffers (16 KiB each at most), the library's and the connection's
// read and write buffers, the goroutines' stacks.
const idleSocketBytes = 160 << 10

// N sockets each run one turn of about 1 MB (in and out), then idle: the
// live heap grows by less than N × idleSocketBytes. A socket kept its
// last turn's buffers (about 5.8 MB each) until the next turn.
func TestSocketIdleHeapBounded(t *testing.T) {
	const n = 12
	h := start(t, func(c *config.Config) {
		off := config.Dur(0) // the idle clients read nothing, so answer no ping
		c.WebSocket.PingInterval = &off
	})
	big := strings.Repeat(strings.Repeat("x", 99)+" ", 9_500) // 950,000 bytes, under limits.max_body_bytes
	var conns []*websocket.Conn
	for i := 0; i < n; i++ {
		c := openSocket(t, h, bearer(tokApp, "x-service-tenant-id", "heap"+strconv.Itoa(i%4)))
		c.SetReadLimit(8 << 20)
		conns = append(conns, c)
	}
	// A warm-up turn first: the host's own lasting state (plugin
	// instances, pools) is not the sockets'.
	warm := openSocket(t, h, bearer(tokApp))
	warm.SetReadLimit(8 << 20)
	rawTurn(t, warm, create(`,"input":"`+big+`"`))
	warm.Close(websocket.StatusNormalClosure, "")
	time.Sleep(100 * time.Millisecond) // its socket closed on the host too
	before := heapAfterGC()
	for _, c := range conns {
		if ev := last(rawTurn(t, c, create(`,"input":"`+big+`"`))); ev.Get("type").Str != "response.completed" {
			t.Fatalf("1 MB turn: %.300s", ev.Raw)
		}
	}
	time.Sleep(100 * time.Millisecond) // each socket back in its loop
	after := heapAfterGC()
	growth := int64(after) - int64(before)
	t.Logf("%d idle sockets after a 1 MB turn each: heap %d → %d (%d bytes a socket)", n, before, after, growth/n)
	if growth > n*idleSocketBytes {
		t.Fatalf("%d idle sockets hold %d bytes of heap (%d each), want under %d each", n, growth, growth/n, idleSocketBytes)
	}
	runtime.KeepAlive(conns)
}

// runsOf lists the runs of tenant (newest first).
func (h *harness) runsOf(tenant string) []gjson.Result {
	h.t.Helper()
	b := body(h.t, h.do("GET", "/runner/v1/runs?limit=100&tenant_id="+tenant, "", "Authorization", "Bearer "+tokAdmin))
	return gjson.GetBytes(b, "data").Array()
}

// Turns queued behind a socket that closed run no turn: only the run in
// flight exists (cancelled, client_disconnect). Four sockets, so that a
// loop that picks a queued event or the closed context at random fails.
func TestSocketQueuedTurnsAfterCloseMakeNoRuns(t *testing.T) {
	h := start(t, func(c *config.Config) { c.Provider.Offline.TokenDelay = config.Dur(20 * time.Millisecond) })
	long := create(`,"input":"` + strings.Repeat("word ", 200) + `"`)
	for i := 0; i < 4; i++ {
		tenant := "queued" + strconv.Itoa(i)
		c := openSocket(t, h, bearer(tokApp, "x-service-tenant-id", tenant))
		id := firstEvent(t, c, long).Get("response.metadata.service.run_id").Str
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		for j := 0; j < 5; j++ {
			if err := c.Write(ctx, websocket.MessageText, []byte(create(`,"input":"queued `+strconv.Itoa(j)+`"`))); err != nil {
				t.Fatal(err)
			}
		}
		cancel()
		c.Close(websocket.StatusNormalClosure, "bye")
		r := h.waitRun(id, func(r runner.Run) bool { return r.Status.Terminal() })
		if r.Status != runner.StatusCancelled || r.StatusReason != runner.ReasonClientDisconnect {
			t.Fatalf("the turn in flight: %s/%s", r.Status, r.StatusReason)
		}
		time.Sleep(200 * time.Millisecond) // a queued turn would have made its run by now
		if runs := h.runsOf(tenant); len(runs) != 1 {
			t.Fatalf("socket %d: %d runs after the close, want the one in flight: %v", i, len(runs), runs)
		}
	}
}

// A client that stops reading and so answers no ping is recorded
// client_stalled, as a write that meets its deadline is, not
// client_disconnect; the turns it queued make no run.
func TestSocketUnansweredPingIsStalled(t *testing.T) {
	h := start(t, func(c *config.Config) {
		p := config.Dur(200 * time.Millisecond)
		c.WebSocket.PingInterval = &p
		c.Limits.WriteTimeout = config.Dur(time.Minute) // the ping, not a write, finds it
		c.Provider.Offline.TokenDelay = config.Dur(20 * time.Millisecond)
	})
	c := openSocket(t, h, bearer(tokApp, "x-service-tenant-id", "deaf"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for j := 0; j < 3; j++ {
		if err := c.Write(ctx, websocket.MessageText, []byte(create(`,"input":"`+strings.Repeat("word ", 300)+`"`))); err != nil {
			t.Fatal(err)
		}
	}
	// Never read.
	var id string
	for began := time.Now(); id == ""; time.Sleep(10 * time.Millisecond) {
		if runs := h.runsOf("deaf"); len(runs) > 0 {
			id = runs[0].Get("id").Str
		}
		if time.Since(began) > 10*time.Second {
			t.Fatal("no run")
		}
	}
	r := h.waitRun(id, func(r runner.Run) bool { return r.Status.Terminal() })
	if r.Status != runner.StatusCancelled || r.StatusReason != runner.ReasonClientStalled {
		t.Fatalf("a socket that answers no ping: %s/%s", r.Status, r.StatusReason)
	}
	time.Sleep(200 * time.Millisecond)
	if runs := h.runsOf("deaf"); len(runs) != 1 {
		t.Fatalf("%d runs, want the one in flight", len(runs))
	}
}

// An idle socket ends at websocket.idle_timeout, as at its age limit:
// the error event the SDKs reconnect on, then close code 1000.
func TestSocketIdleTimeout(t *testing.T) {
	h := start(t, func(c *config.Config) { d := config.Dur(300 * time.Millisecond); c.WebSocket.IdleTimeout = &d })
	c := openSocket(t, h, bearer(tokApp))
	rawTurn(t, c, create(`,"input":"hi"`))
	// Without the idle timeout the socket would stay open to its age
	// limit (an hour): a watch of 30 s tells the two apart whatever the
	// machine's load, as a bound near the timeout would not.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil || gjson.GetBytes(b, "error.code").Str != "websocket_connection_limit_reached" {
		t.Fatalf("at the idle timeout: %s %v", b, err)
	}
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("closed with %v", err)
	}
}

// Events sent behind a turn in flight are held up to the socket's byte
// budget; beyond it each is answered, in its turn, with a 429 error event
// and runs nothing, and the socket goes on.
func TestSocketReadAheadBudget(t *testing.T) {
	h := start(t, func(c *config.Config) {
		c.WebSocket.MaxSocketBytes = 2 << 20
		c.Provider.Offline.TokenDelay = config.Dur(time.Millisecond)
	})
	c := openSocket(t, h, bearer(tokApp, "x-service-tenant-id", "ahead"))
	c.SetReadLimit(8 << 20)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := create(`,"input":"` + strings.Repeat("word ", 1000) + `"`)
	if err := c.Write(ctx, websocket.MessageText, []byte(first)); err != nil {
		t.Fatal(err)
	}
	big := create(`,"input":"` + strings.Repeat(strings.Repeat("x", 4999)+" ", 100) + `"`) // 500 KB in 100 words
	const sent = 8
	time.Sleep(50 * time.Millisecond) // the first turn is in flight
	for i := 0; i < sent; i++ {
		if err := c.Write(ctx, websocket.MessageText, []byte(big)); err != nil {
			t.Fatal(err)
		}
	}
	var completed, refused int
	for completed+refused < sent+1 {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("after %d completed, %d refused: %v", completed, refused, err)
		}
		switch ev := gjson.ParseBytes(b); ev.Get("type").Str {
		case "response.completed":
			completed++
		case "error":
			if ev.Get("status").Int() != 429 || ev.Get("error.code").Str != "rate_limit_exceeded" {
				t.Fatalf("error event: %s", b)
			}
			refused++
		}
	}
	// 2 MiB holds three 500 KB events (by capacity), not eight.
	if refused == 0 || completed > 5 {
		t.Fatalf("%d turns ran and %d were refused, want the budget to refuse some", completed, refused)
	}
	if ev := last(rawTurn(t, c, create(`,"input":"after"`))); ev.Get("type").Str != "response.completed" {
		t.Fatalf("after the refusals: %s", ev.Raw)
	}
	if runs := h.runsOf("ahead"); len(runs) != completed+1 {
		t.Fatalf("%d runs for %d completed turns", len(runs), completed+1)
	}
}

// holderEnv, set, makes TestSocketDescriptorHeadroom the child that holds
// sockets open to the URL it names.
const holderEnv = "RUNEDGE_TEST_SOCKET_HOLDER"

// Under a descriptor limit of 256, one tenant opening every socket it can
// (no socket cap of its own in the way) is refused at the sockets' share
// of the descriptors (503), and another tenant's request, /healthz and the
// admin listener still answer. The sockets are opened by a child process,
// so that their client ends do not spend the server's descriptors. Without
// the share, the server ran out of descriptors and stopped accepting.
func TestSocketDescriptorHeadroom(t *testing.T) {
	if url := os.Getenv(holderEnv); url != "" {
		holdSockets(t, url)
		return
	}
	const limit = 256
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	if was.Max < limit {
		t.Fatalf("the hard descriptor limit %d is under %d", was.Max, limit)
	}
	low := was
	low.Cur = limit
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was) })
	h := start(t, func(c *config.Config) {
		withOtherToken(c)
		c.Admin.Listen = "127.0.0.1:0"
		c.WebSocket.MaxSockets, c.WebSocket.MaxSocketsPerTenant, c.WebSocket.MaxSocketsPerToken = 100_000, 100_000, 100_000
	})
	child := exec.Command(os.Args[0], "-test.run=^TestSocketDescriptorHeadroom$", "-test.count=1")
	child.Env = append(os.Environ(), holderEnv+"="+h.URL)
	child.Stderr = os.Stderr
	in, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); child.Wait() }()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "held ") {
				line <- sc.Text()
				return
			}
		}
		close(line)
	}()
	var held, status int
	select {
	case l := <-line:
		fmt.Sscanf(l, "held %d refused %d", &held, &status)
	case <-time.After(90 * time.Second):
		t.Fatal("the child opened no sockets")
	}
	t.Logf("under a descriptor limit of %d: %d sockets open, the next refused with %d", limit, held, status)
	if status != http.StatusServiceUnavailable || held > socket.DescriptorShare(limit) {
		t.Fatalf("%d sockets open, then %d: want at most %d, then 503", held, status, socket.DescriptorShare(limit))
	}
	client := &http.Client{Timeout: 5 * time.Second}
	post, err := http.NewRequest("POST", h.URL+"/v1/responses", strings.NewReader(`{"model":"service","input":"still served"}`))
	if err != nil {
		t.Fatal(err)
	}
	post.Header.Set("Authorization", "Bearer "+tokOther)
	post.Header.Set("x-service-tenant-id", "t2")
	res, err := client.Do(post)
	if err != nil {
		t.Fatalf("another tenant's request: %v", err)
	}
	if b := body(t, res); res.StatusCode != 200 || gjson.GetBytes(b, "output_text").Str != "You said: still served" {
		t.Fatalf("another tenant's request: %d %s", res.StatusCode, b)
	}
	for _, u := range []string{h.URL + "/healthz", h.Admin + "/healthz"} {
		res, err := client.Get(u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", u, res.StatusCode)
		}
	}
}

// holdSockets opens sockets to url as one tenant until one is refused (or
// fails), prints "held N refused STATUS", and holds them until its stdin
// closes.
func holdSockets(t *testing.T, url string) {
	var conns []*websocket.Conn
	status := 0
	for len(conns) < 1000 {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		c, res, err := websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1)+"/v1/responses",
			&websocket.DialOptions{HTTPHeader: bearer(tokApp, "x-service-tenant-id", "hog")})
		cancel()
		if err != nil {
			if res != nil {
				status = res.StatusCode
			}
			break
		}
		conns = append(conns, c)
	}
	fmt.Printf("held %d refused %d\n", len(conns), status)
	io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		c.CloseNow()
	}
}
