package login

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// CookieName is the session cookie.
const CookieName = "appserver_session"

// Auth serves log in and log out and guards the routes that need a user.
type Auth struct {
	Users    *Users
	Sessions *Sessions
	// Secure marks the cookie Secure; set it whenever the app is served over
	// HTTPS, which is everywhere but localhost (see SecureByDefault).
	Secure bool
	// Throttle limits login attempts and concurrent password hashes
	// (NewThrottle's defaults when nil).
	Throttle *Throttle
}

type ctxKey struct{}

// UserFrom returns the logged-in user Require put in ctx, or nil.
func UserFrom(ctx context.Context) *User {
	u, _ := ctx.Value(ctxKey{}).(*User)
	return u
}

// Require lets a request through only with a live session, and hands the
// user to next in the request's context. Without one it answers 401 with a
// JSON error, which the page turns into its login form.
func (a *Auth) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := a.current(r)
		if u == nil {
			WriteError(w, http.StatusUnauthorized, "authentication_error", "login_required", "Please log in.")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, u)))
	})
}

// current returns the user of the request's session cookie, or nil.
func (a *Auth) current(r *http.Request) *User {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return nil
	}
	return a.Sessions.User(c.Value)
}

// Login checks {"login","password"} and starts a session. Every login
// gets a new session id, so an id planted before login is never promoted.
func (a *Auth) Login(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Login    string `json:"login"`
		Password string `json:"password"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&in); err != nil {
		WriteError(w, http.StatusBadRequest, "invalid_request_error", "invalid_body", "Send your user name and password.")
		return
	}
	t := a.Throttle
	if t == nil {
		t = defaultThrottle
	}
	if no := t.admit(clientIP(r), in.Login); no != nil {
		writeRefusal(w, no)
		return
	}
	var u *User
	if !t.hash(r.Context(), func() { u = a.Users.Check(in.Login, in.Password) }) {
		writeRefusal(w, &refusal{"The server is busy with other logins; try again in a moment.", time.Second})
		return
	}
	if u == nil {
		t.failed(in.Login)
		WriteError(w, http.StatusUnauthorized, "authentication_error", "invalid_login", "Wrong user name or password.")
		return
	}
	if old, err := r.Cookie(CookieName); err == nil {
		a.Sessions.Delete(old.Value)
	}
	id := a.Sessions.Create(u)
	http.SetCookie(w, a.cookie(id, int(a.Sessions.ttl/time.Second)))
	writeUser(w, u)
}

// Logout ends the session and clears the cookie.
func (a *Auth) Logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(CookieName); err == nil {
		a.Sessions.Delete(c.Value)
	}
	http.SetCookie(w, a.cookie("", -1))
	w.WriteHeader(http.StatusNoContent)
}

// Me answers who is logged in (behind Require), so the page can skip the
// login form when a session is still live.
func (a *Auth) Me(w http.ResponseWriter, r *http.Request) {
	writeUser(w, UserFrom(r.Context()))
}

// cookie is the session cookie: HttpOnly so page scripts (and anything
// injected into them) cannot read it, SameSite=Lax so other sites cannot
// make the browser send it with their POSTs.
func (a *Auth) cookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: CookieName, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: a.Secure,
	}
}

// writeUser answers the public part of u: never the password hash.
func writeUser(w http.ResponseWriter, u *User) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]any{"user": map[string]string{
		"login": u.Login, "name": u.Name, "tenant": u.Tenant,
	}})
}

// WriteError writes an error in the shape runedge (and OpenAI) use,
// {"error":{"message","type","param","code"}}, so the page reads the app
// server's own errors and runedge's the same way.
func WriteError(w http.ResponseWriter, status int, typ, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": message, "type": typ, "param": nil, "code": code,
	}})
}
