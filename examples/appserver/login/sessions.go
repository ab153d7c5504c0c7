package login

import (
	"crypto/rand"
	"sync"
	"time"
)

// Sessions is the server-side session map. The cookie holds only a random
// id; who the user is stays on the server, so a cookie can be revoked (log
// out) and cannot be forged or edited.
type Sessions struct {
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex
	byID map[string]session
}

type session struct {
	user    *User
	expires time.Time
}

// NewSessions returns an empty session map whose sessions last ttl.
func NewSessions(ttl time.Duration) *Sessions {
	return &Sessions{ttl: ttl, now: time.Now, byID: make(map[string]session)}
}

// Create starts a session for u and returns its id: 26 characters of
// crypto/rand base32, 130 bits, too many to guess.
func (s *Sessions) Create(u *User) string {
	id := rand.Text()
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	// Sweep expired sessions here rather than in a goroutine: the map only
	// grows on Create, so this bounds it without a background timer.
	for k, v := range s.byID {
		if !now.Before(v.expires) {
			delete(s.byID, k)
		}
	}
	s.byID[id] = session{user: u, expires: now.Add(s.ttl)}
	return id
}

// User returns the user of session id, or nil if there is no such live
// session.
func (s *Sessions) User(id string) *User {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.byID[id]
	if !ok {
		return nil
	}
	if !s.now().Before(v.expires) {
		delete(s.byID, id)
		return nil
	}
	return v.user
}

// Delete ends session id.
func (s *Sessions) Delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, id)
}
