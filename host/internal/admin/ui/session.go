package ui

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"sync"
	"time"

	"github.com/runedge/runedge/filters/apierr"
)

// cookieName is the session cookie. The __Host- prefix (which needs
// Secure) is not used because the admin listener is often plain HTTP on
// loopback; Path=/ui/ and no Domain keep it to this page.
const cookieName = "runedge_ui"

// maxSessions bounds the session table: a login beyond it evicts the
// session closest to expiry.
const maxSessions = 1000

// sessions maps session ids to the admin token they were opened with. Only
// a digest of each id is kept, so the table (or a dump of the process)
// holds nothing a browser could present.
type sessions struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu sync.Mutex
	m  map[[sha256.Size]byte]*session
}

// session is one login. It is bound to its token's name and hash: a
// reload that removes the token or changes its hash (a rotation after a
// leak) ends it, as do logout and its lifetime.
type session struct {
	token   string            // the admin token's name, never the token
	hash    [sha256.Size]byte // the token's configured hash when it logged in
	expires time.Time
	// done is closed when the session ends, so that its live streams end
	// at once rather than at their next write.
	done chan struct{}
}

func newSessions(ttl time.Duration, max int) *sessions {
	if ttl <= 0 {
		ttl = 8 * time.Hour
	}
	return &sessions{ttl: ttl, max: max, now: time.Now, m: map[[sha256.Size]byte]*session{}}
}

// open starts a session for the token of that name and hash and returns
// its id: 256 random bits, URL-safe.
func (s *sessions) open(token string, hash [sha256.Size]byte) (id string, expires time.Time) {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	id = base64.RawURLEncoding.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if len(s.m) >= s.max {
		s.sweep(now)
	}
	expires = now.Add(s.ttl)
	s.m[sha256.Sum256([]byte(id))] = &session{token: token, hash: hash, expires: expires, done: make(chan struct{})}
	return id, expires
}

// end removes the session under k and ends its streams. Called with mu
// held.
func (s *sessions) end(k [sha256.Size]byte) {
	if v, ok := s.m[k]; ok {
		delete(s.m, k)
		close(v.done)
	}
}

// sweep drops ended sessions and, if the table is still full, the one
// closest to its end. Called with mu held.
func (s *sessions) sweep(now time.Time) {
	var oldest [sha256.Size]byte
	var oldestAt time.Time
	for k, v := range s.m {
		if !now.Before(v.expires) {
			s.end(k)
			continue
		}
		if oldestAt.IsZero() || v.expires.Before(oldestAt) {
			oldest, oldestAt = k, v.expires
		}
	}
	if len(s.m) >= s.max {
		s.end(oldest)
	}
}

// get returns the live session of id.
func (s *sessions) get(id string) (*session, bool) {
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	if ok && !s.now().Before(v.expires) {
		s.end(k)
		return nil, false
	}
	return v, ok
}

func (s *sessions) close(id string) {
	s.mu.Lock()
	s.end(sha256.Sum256([]byte(id)))
	s.mu.Unlock()
}

// revalidate ends every session whose token valid no longer accepts.
func (s *sessions) revalidate(valid func(name string, hash [sha256.Size]byte) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.m {
		if !valid(v.token, v.hash) {
			s.end(k)
		}
	}
}

// secure reports whether the cookie must be Secure for r.
func (u *UI) secure(r *http.Request) bool { return r.TLS != nil || u.cfg.SecureCookie }

// setCookie sets the session cookie: HttpOnly (no script reads it),
// SameSite=Strict (no other site's page sends it), limited to /ui/.
func (u *UI) setCookie(w http.ResponseWriter, r *http.Request, id string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/ui/", Expires: expires,
		MaxAge: int(time.Until(expires).Seconds()), HttpOnly: true, Secure: u.secure(r), SameSite: http.SameSiteStrictMode})
}

func (u *UI) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/ui/", MaxAge: -1,
		HttpOnly: true, Secure: u.secure(r), SameSite: http.SameSiteStrictMode})
}

// current returns the request's live session: its cookie names one, and
// the token it was opened with is still an admin token with the same hash.
func (u *UI) current(r *http.Request) (*session, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil, false
	}
	sess, ok := u.sessions.get(c.Value)
	if !ok {
		return nil, false
	}
	if !u.cfg.Backend.AdminTokenValid(sess.token, sess.hash) {
		u.sessions.close(c.Value)
		return nil, false
	}
	return sess, true
}

// Revalidate ends the sessions, and their live streams, whose token is no
// longer an admin token or has another hash now. The server calls it when
// its configuration changes.
func (u *UI) Revalidate() { u.sessions.revalidate(u.cfg.Backend.AdminTokenValid) }

var errNoSession = apierr.New(apierr.CodeNotLoggedIn, "log in to the operator page first (POST /ui/login)")

// requireSession answers 401 in the OpenAI error shape without a session.
func (u *UI) requireSession(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, ok := u.current(r); !ok {
			writeError(w, errNoSession)
			return
		}
		h(w, r)
	}
}

func (u *UI) getSession(w http.ResponseWriter, r *http.Request) {
	sess, ok := u.current(r)
	if !ok {
		writeError(w, errNoSession)
		return
	}
	writeJSON(w, map[string]any{"token": sess.token, "expires_at": sess.expires.Unix()})
}
