package server

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/internal/httproute"
	"github.com/runedge/runedge/runner/store/postgres/pgtest"
)

// During a store outage every endpoint that needs the store answers 503
// unavailable with Retry-After — the compatible endpoints, the stored
// responses and the native run API alike (the walk of the route table) —
// never a 400 or a 500, and never with the driver's text; once the store
// is back, they serve again. On SQLite the outage is another process
// holding the file's locks (as a stuck sqlite3 shell would); on
// PostgreSQL the database's connections are cut and refused.
func TestStoreOutageIs503OnEveryEndpoint(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		h := start(t, nil)
		ids := seedOutage(t, h)
		release := holdSQLiteLocks(t, h.cfg.Path(h.cfg.Store.Path)+"-shm")
		wantOutage(t, h, ids)
		release()
		wantServing(t, h, ids)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.Schema(t)
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		p := newTCPProxy(t, u.Host)
		u.Host = p.addr
		h := start(t, func(c *config.Config) { c.Store.Driver, c.Store.DSN = "postgres", u.String() })
		ids := seedOutage(t, h)
		p.cut()
		wantOutage(t, h, ids)
		p.restore()
		wantServing(t, h, ids)
	})
}

// outageIDs are what the routes' wildcards are filled with.
type outageIDs struct{ response, run, conversation, item string }

func seedOutage(t *testing.T, h *harness) outageIDs {
	t.Helper()
	res := h.do("POST", "/v1/responses", `{"model":"service","input":"remember me"}`)
	b := body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	id := gjson.GetBytes(b, "id").Str
	res = h.do("POST", "/v1/conversations", `{"items":[{"role":"user","content":"remember me"}]}`)
	if b = body(t, res); res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	conv := gjson.GetBytes(b, "id").Str
	items := body(t, h.do("GET", "/v1/conversations/"+conv+"/items", ""))
	return outageIDs{response: id, run: runOf(id), conversation: conv, item: gjson.GetBytes(items, "first_id").Str}
}

// storeRoutes are the requests of every route of the table that needs the
// run store, with real ids.
func storeRoutes(ids outageIDs) [][2]string {
	var out [][2]string
	for _, r := range httproute.Table {
		for _, m := range r.Methods {
			if m.Op == httproute.Models || m.Op == httproute.Health || m.Op == httproute.InputTokens {
				continue // no store involved (input_tokens: unless it replays; below)
			}
			id := ids.response
			switch {
			case strings.HasPrefix(r.Pattern, "/runner/"):
				id = ids.run
			case strings.HasPrefix(r.Pattern, "/v1/conversations"):
				id = ids.conversation
			}
			path := strings.ReplaceAll(strings.ReplaceAll(r.Pattern, "{id}", id), "{item_id}", ids.item)
			switch m.Op { // POST routes whose body is not the endpoint's plain one
			case httproute.StartRun:
				path += "#" + `{"input":[{"role":"user","content":"during the outage"}]}`
			case httproute.CompactResponse:
				path += "#" + `{"model":"service","input":"during the outage"}`
			}
			out = append(out, [2]string{m.Method, path})
		}
	}
	// And the variants that read or write the store differently: streamed
	// (the error comes before the stream starts), a continued response,
	// a stream resumed.
	return append(out,
		[2]string{"POST", "/v1/chat/completions#" + `{"model":"service","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		[2]string{"POST", "/v1/responses#" + `{"model":"service","stream":true,"input":"hi"}`},
		[2]string{"POST", "/v1/responses#" + `{"model":"service","input":"and then?","previous_response_id":"` + ids.response + `"}`},
		[2]string{"GET", "/v1/responses/" + ids.response + "?stream=true"},
		[2]string{"POST", "/v1/responses/input_tokens#" + `{"model":"service","input":"and then?","previous_response_id":"` + ids.response + `"}`},
		[2]string{"POST", "/v1/responses#" + `{"model":"service","input":"and then?","conversation":"` + ids.conversation + `"}`})
}

// outageBody is the body of a request of storeRoutes: after '#' in its
// path, else the endpoint's plain request.
func outageBody(path string) (string, string) {
	if p, b, ok := strings.Cut(path, "#"); ok {
		return p, b
	}
	switch path {
	case "/v1/chat/completions":
		return path, chatBody
	case "/v1/responses":
		return path, `{"model":"service","input":"during the outage"}`
	}
	if strings.HasPrefix(path, "/v1/conversations") {
		return path, `{"metadata":{"k":"v"},"items":[{"role":"user","content":"during the outage"}]}`
	}
	return path, ""
}

func wantOutage(t *testing.T, h *harness, ids outageIDs) {
	t.Helper()
	var wg sync.WaitGroup
	for _, rq := range storeRoutes(ids) {
		wg.Add(1)
		go func() { // in parallel: each waits out the store's own timeouts
			defer wg.Done()
			path, reqBody := outageBody(rq[1])
			res := h.do(rq[0], path, reqBody)
			b := body(t, res)
			if res.StatusCode != 503 || gjson.GetBytes(b, "error.code").Str != "unavailable" ||
				gjson.GetBytes(b, "error.type").Str != "api_error" || res.Header.Get("Retry-After") == "" {
				t.Errorf("%s %s during the outage: %d Retry-After %q %s", rq[0], rq[1], res.StatusCode, res.Header.Get("Retry-After"), b)
			}
			for _, leak := range []string{"sqlite", "SQLITE", "postgres", "127.0.0.1", "locked", "connect"} {
				if strings.Contains(gjson.GetBytes(b, "error.message").Str, leak) {
					t.Errorf("%s %s: the client sees %q: %s", rq[0], rq[1], leak, b)
				}
			}
		}()
	}
	wg.Wait()
}

func wantServing(t *testing.T, h *harness, ids outageIDs) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		res := h.do("GET", "/v1/responses/"+ids.response, "")
		b := body(t, res)
		if res.StatusCode == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the outage: %d %s", res.StatusCode, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if res := h.do("POST", "/v1/chat/completions", chatBody); res.StatusCode != 200 {
		t.Fatalf("after the outage: %d %s", res.StatusCode, body(t, res))
	}
}

// holdSQLiteLocks starts another process that takes SQLite's WAL locks
// (the write, checkpoint, recovery and read-mark bytes of the -shm file)
// and holds them until release: no connection of the server can then
// read or write the database.
func holdSQLiteLocks(t *testing.T, shm string) (release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldSQLiteLocks$")
	cmd.Env = append(os.Environ(), "RUNEDGE_TEST_HOLD_SHM="+shm)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(stdout, buf); err != nil || string(buf) != "locked" {
		cmd.Process.Kill()
		t.Fatalf("lock holder: %q %v", buf, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			stdin.Close()
			cmd.Wait()
		})
	}
	t.Cleanup(release)
	return release
}

// TestHelperHoldSQLiteLocks is the lock holder of holdSQLiteLocks, run in
// a process of its own (POSIX locks do not conflict within one process).
func TestHelperHoldSQLiteLocks(t *testing.T) {
	shm := os.Getenv("RUNEDGE_TEST_HOLD_SHM")
	if shm == "" {
		// Not a test on its own: TestStoreOutageIs503OnEveryEndpoint runs
		// it (in CI too) as a child process with RUNEDGE_TEST_HOLD_SHM set.
		t.Skip("runs only as the lock-holding child process of TestStoreOutageIs503OnEveryEndpoint")
	}
	f, err := os.OpenFile(shm, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// SQLite's unix VFS keeps its WAL locks in 8 bytes of the -shm file
	// from offset 120 (write, checkpoint, recover, 5 read marks).
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: 120, Len: 8}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLKW, &lk); err != nil {
		t.Fatal(err)
	}
	fmt.Print("locked")
	io.Copy(io.Discard, os.Stdin) // until the test closes it
}

// tcpProxy forwards connections to a PostgreSQL server; cut closes every
// connection and refuses new ones, as a database that went away does.
type tcpProxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	p := &tcpProxy{target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr, p.ln = ln.Addr().String(), ln
	go p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *tcpProxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { io.Copy(up, c); up.Close() }()
		go func() { io.Copy(c, up); c.Close() }()
	}
}

func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// restore listens again on the same address.
func (p *tcpProxy) restore() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		panic(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go p.serve(ln)
}
