package login

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// User is one person who may log in to the app server. ActorID, Name and
// Tenant are what runedge records on every run the user starts, so they
// follow runedge's header rules (see checkUser).
type User struct {
	Login   string `json:"login"`
	ActorID string `json:"actor_id"`
	Name    string `json:"name"`
	Tenant  string `json:"tenant"`
	// Password is a hash from HashPassword, never the password itself.
	Password string `json:"password"`

	hash passwordHash
}

// Users is the configured user list, by login name.
type Users struct {
	byLogin map[string]*User
	// decoy is checked when the login name is unknown, so that a wrong
	// name costs as much time as a wrong password and timing does not
	// tell which names exist.
	decoy passwordHash
}

// LoadUsers reads a JSON array of users from a file.
func LoadUsers(path string) (*Users, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	u, err := ReadUsers(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return u, nil
}

// ReadUsers reads a JSON array of users and checks every entry, so a typo
// fails at start rather than at a user's first login.
func ReadUsers(r io.Reader) (*Users, error) {
	var list []*User
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	return NewUsers(list)
}

// NewUsers checks users and indexes them by login name.
func NewUsers(list []*User) (*Users, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("users: the list is empty; nobody could log in")
	}
	us := &Users{byLogin: make(map[string]*User, len(list))}
	for i, u := range list {
		if err := checkUser(u); err != nil {
			return nil, fmt.Errorf("users[%d]: %w", i, err)
		}
		if _, dup := us.byLogin[u.Login]; dup {
			return nil, fmt.Errorf("users[%d]: login %q appears twice", i, u.Login)
		}
		us.byLogin[u.Login] = u
	}
	// The decoy costs what a real user's check costs.
	us.decoy = list[0].hash
	return us, nil
}

// checkUser validates u and parses its password hash.
func checkUser(u *User) error {
	switch {
	case u.Login == "":
		return fmt.Errorf("login is empty")
	case !isID(u.ActorID) || len(u.ActorID) > 256:
		return fmt.Errorf("actor_id %q: want 1-256 of A-Z a-z 0-9 . _ : -", u.ActorID)
	case !isID(u.Tenant) || len(u.Tenant) > 128:
		return fmt.Errorf("tenant %q: want 1-128 of A-Z a-z 0-9 . _ : -", u.Tenant)
	case !isHeaderText(u.Name) || len(u.Name) > 256:
		return fmt.Errorf("name %q: want 1-256 printable ASCII characters", u.Name)
	}
	h, err := parseHash(u.Password)
	if err != nil {
		return fmt.Errorf("password of %q: %w (make one with `appserver hash-password`)", u.Login, err)
	}
	u.hash = h
	return nil
}

// Check returns the user whose login and password match, or nil.
func (us *Users) Check(login, password string) *User {
	u := us.byLogin[login]
	if u == nil {
		us.decoy.matches(password)
		return nil
	}
	if !u.hash.matches(password) {
		return nil
	}
	return u
}

// isID reports whether s is a non-empty id as runedge accepts it in
// x-service-actor-id and x-service-tenant-id.
func isID(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '.' || r == '_' || r == ':' || r == '-') {
			return false
		}
	}
	return s != ""
}

// isHeaderText reports whether s is non-empty printable ASCII. runedge
// accepts more, but an HTTP header carries ASCII safely everywhere.
func isHeaderText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return s != ""
}
