package login

import (
	"strings"
	"testing"
	"time"
)

func mustHash(t *testing.T, pw string) string {
	t.Helper()
	h, err := HashPassword(pw, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestPasswordHash(t *testing.T) {
	h := mustHash(t, "correct horse")
	if h2 := mustHash(t, "correct horse"); h2 == h {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
	p, err := parseHash(h)
	if err != nil {
		t.Fatal(err)
	}
	if p.iterations != 1000 || !p.matches("correct horse") {
		t.Fatalf("%+v does not match its password", p)
	}
	for _, wrong := range []string{"", "correct horse ", "Correct horse"} {
		if p.matches(wrong) {
			t.Errorf("matches %q", wrong)
		}
	}
	for _, bad := range []string{
		"", "correct horse", "sha256$1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5",
		"pbkdf2-sha256$0$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5",
		"pbkdf2-sha256$10$c2Fs$a2V5a2V5a2V5a2V5a2V5",
		"pbkdf2-sha256$10$c2FsdHNhbHQ$a2V5",
	} {
		if _, err := parseHash(bad); err == nil {
			t.Errorf("parseHash(%q) accepted", bad)
		}
	}
}

func TestReadUsers(t *testing.T) {
	h := mustHash(t, "pw")
	good := `[{"login":"ada","actor_id":"u-ada","name":"Ada Lovelace","tenant":"acme","password":"` + h + `"}]`
	us, err := ReadUsers(strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if u := us.Check("ada", "pw"); u == nil || u.ActorID != "u-ada" || u.Tenant != "acme" {
		t.Fatalf("Check = %+v", u)
	}
	if us.Check("ada", "nope") != nil || us.Check("bob", "pw") != nil || us.Check("", "") != nil {
		t.Fatal("a wrong login passed")
	}
	for name, in := range map[string]string{
		"empty list":      `[]`,
		"unknown field":   `[{"login":"a","actor_id":"u","name":"A","tenant":"t","password":"` + h + `","admin":true}]`,
		"bad tenant":      `[{"login":"a","actor_id":"u","name":"A","tenant":"a b","password":"` + h + `"}]`,
		"bad actor":       `[{"login":"a","actor_id":"","name":"A","tenant":"t","password":"` + h + `"}]`,
		"control in name": `[{"login":"a","actor_id":"u","name":"A\u0001","tenant":"t","password":"` + h + `"}]`,
		"plain password":  `[{"login":"a","actor_id":"u","name":"A","tenant":"t","password":"secret"}]`,
		"duplicate": `[{"login":"a","actor_id":"u","name":"A","tenant":"t","password":"` + h + `"},
			{"login":"a","actor_id":"v","name":"B","tenant":"t","password":"` + h + `"}]`,
	} {
		if _, err := ReadUsers(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The users file shipped with the example loads, so `make example` can
// log its demo users in.
func TestShippedUsers(t *testing.T) {
	us, err := LoadUsers("../users.json")
	if err != nil {
		t.Fatal(err)
	}
	// The README's demo login.
	if u := us.Check("ada", "analytical-engine"); u == nil || u.Tenant != "acme" {
		t.Fatalf("ada: %+v", u)
	}
}

func TestSessions(t *testing.T) {
	now := time.Unix(1000, 0)
	s := NewSessions(time.Minute)
	s.now = func() time.Time { return now }
	u := &User{Login: "ada"}
	a, b := s.Create(u), s.Create(u)
	if a == b || len(a) < 26 {
		t.Fatalf("ids %q %q", a, b)
	}
	if s.User(a) != u || s.User("guess") != nil {
		t.Fatal("lookup")
	}
	s.Delete(a)
	if s.User(a) != nil {
		t.Fatal("deleted session still live")
	}
	s.Create(u) // never looked up again: only the sweep can remove it
	now = now.Add(time.Minute)
	if s.User(b) != nil {
		t.Fatal("expired session still live")
	}
	s.Create(u) // sweeps
	if len(s.byID) != 1 {
		t.Fatalf("%d sessions kept; expired ones should be swept", len(s.byID))
	}
}
