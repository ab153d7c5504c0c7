package login

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// loginServer serves Login for two users, ada / pw and bob / pw, hashed
// with iterations, behind t.
func loginServer(tb testing.TB, th *Throttle, iterations int) string {
	tb.Helper()
	var users []*User
	for _, name := range []string{"ada", "bob", "cy", "dee"} {
		h, err := HashPassword("pw", iterations)
		if err != nil {
			tb.Fatal(err)
		}
		users = append(users, &User{Login: name, ActorID: "u-" + name, Name: name, Tenant: "acme", Password: h})
	}
	us, err := NewUsers(users)
	if err != nil {
		tb.Fatal(err)
	}
	a := &Auth{Users: us, Sessions: NewSessions(time.Hour), Throttle: th}
	srv := httptest.NewServer(http.HandlerFunc(a.Login))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// clientFrom is an HTTP client whose connections come from local address ip
// (any of 127.0.0.0/8 reaches the loopback server), so a test can log in
// from several addresses.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

func tryLogin(t *testing.T, c *http.Client, url, user, pw string) *http.Response {
	t.Helper()
	res, err := c.Post(url, "application/json", strings.NewReader(`{"login":"`+user+`","password":"`+pw+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func want429(t *testing.T, res *http.Response, what string) {
	t.Helper()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("%s: %d (Retry-After %q), want 429 with Retry-After", what, res.StatusCode, res.Header.Get("Retry-After"))
	}
}

// TestThrottlePerIP: after PerIP attempts from one address, right or
// wrong, that address gets 429; another address still logs in.
func TestThrottlePerIP(t *testing.T) {
	th := NewThrottle()
	th.PerIP, th.PerUser = 4, 100
	url := loginServer(t, th, 1000)
	c := clientFrom("127.0.0.1")
	for i := range 4 {
		if res := tryLogin(t, c, url, "ada", "pw"); res.StatusCode != 200 {
			t.Fatalf("attempt %d: %d", i+1, res.StatusCode)
		}
	}
	want429(t, tryLogin(t, c, url, "ada", "pw"), "5th attempt from one address")
	want429(t, tryLogin(t, c, url, "bob", "pw"), "another user from that address")
	if res := tryLogin(t, clientFrom("127.0.0.2"), url, "ada", "pw"); res.StatusCode != 200 {
		t.Fatalf("another address: %d, want 200", res.StatusCode)
	}
}

// TestThrottlePerUser: after PerUser wrong passwords for a user, even the
// right one gets 429, from any address; other users are unaffected.
func TestThrottlePerUser(t *testing.T) {
	th := NewThrottle()
	th.PerIP, th.PerUser = 100, 3
	url := loginServer(t, th, 1000)
	for i, ip := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		if res := tryLogin(t, clientFrom(ip), url, "ada", "guess"); res.StatusCode != 401 {
			t.Fatalf("wrong password %d: %d, want 401", i+1, res.StatusCode)
		}
	}
	want429(t, tryLogin(t, clientFrom("127.0.0.4"), url, "ada", "pw"), "right password after 3 failures")
	if res := tryLogin(t, clientFrom("127.0.0.4"), url, "bob", "pw"); res.StatusCode != 200 {
		t.Fatalf("another user: %d, want 200", res.StatusCode)
	}
	// The window ends: ada may try again.
	th.mu.Lock()
	th.now = func() time.Time { return time.Now().Add(th.Window) }
	th.mu.Unlock()
	if res := tryLogin(t, clientFrom("127.0.0.5"), url, "ada", "pw"); res.StatusCode != 200 {
		t.Fatalf("after the window: %d, want 200", res.StatusCode)
	}
}

// TestThrottleConcurrentHashes: with one hash at a time and slow hashes,
// logins arriving together do not all hash: those that find no free slot
// within HashWait get 429 at once instead of queueing CPU work.
func TestThrottleConcurrentHashes(t *testing.T) {
	th := NewThrottle()
	th.MaxHashes, th.HashWait = 1, 20*time.Millisecond
	url := loginServer(t, th, DefaultIterations) // a fraction of a second each
	var wg sync.WaitGroup
	codes := make(chan int, 4)
	start := make(chan struct{})
	for i, user := range []string{"ada", "bob", "cy", "dee"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clientFrom("127.0.0." + string(rune('1'+i)))
			<-start
			codes <- tryLogin(t, c, url, user, "pw").StatusCode
		}()
	}
	close(start)
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[200] < 1 || count[429] < 1 || count[200]+count[429] != 4 {
		t.Fatalf("status counts %v; want some 200 and the rest 429", count)
	}
}

func TestThrottleBoundedState(t *testing.T) {
	th := NewThrottle()
	th.MaxKeys = 3
	for i := range 3 {
		if no := th.admit("10.0.0."+string(rune('1'+i)), "x"); no != nil {
			t.Fatal(no.message)
		}
	}
	if no := th.admit("10.0.0.9", "x"); no == nil {
		t.Fatal("a fourth address was admitted into a full map")
	}
	th.now = func() time.Time { return time.Now().Add(th.Window) }
	if no := th.admit("10.0.0.9", "x"); no != nil || len(th.ips) != 1 {
		t.Fatalf("after the window: %v, %d entries; want the ended ones swept", no, len(th.ips))
	}
}

func TestSecureByDefault(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:3000": false, "localhost:3000": false, "[::1]:3000": false, "127.0.0.2:80": false,
		":3000": true, "0.0.0.0:3000": true, "10.0.0.5:3000": true, "example.com:443": true, "[::]:3000": true,
	} {
		if got := SecureByDefault(addr); got != want {
			t.Errorf("SecureByDefault(%q) = %v, want %v", addr, got, want)
		}
	}
}
