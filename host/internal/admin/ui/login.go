package ui

import (
	"html/template"
	"net/http"
	"strconv"
	"time"
)

// loginTmpl is the login form; html/template escapes the message.
var loginTmpl = template.Must(template.ParseFS(static, "static/login.html"))

// maxLoginBody bounds the login form: one token.
const maxLoginBody = 4 << 10

func (u *UI) renderLogin(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	loginTmpl.Execute(w, struct{ Error string }{msg})
}

func (u *UI) loginPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := u.current(r); ok {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	}
	u.renderLogin(w, http.StatusOK, "")
}

// page serves the operator page to a logged-in browser, the login form to
// anyone else.
func (u *UI) page(w http.ResponseWriter, r *http.Request) {
	if _, ok := u.current(r); !ok {
		http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
		return
	}
	http.ServeFileFS(w, r, static, "static/index.html")
}

// login trades the admin token, posted once by the form, for a session
// cookie. It refuses cross-site posts (Sec-Fetch-Site, or Origin against
// Host: net/http's CrossOriginProtection) and throttles failures.
func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	if err := u.origin.Check(r); err != nil {
		u.cfg.Log.Warn("operator page: cross-site login refused", "remote", r.RemoteAddr, "origin", r.Header.Get("Origin"))
		u.renderLogin(w, http.StatusForbidden, "Cross-site login refused.")
		return
	}
	ip := clientAddr(r, u.cfg.TrustedProxies)
	if wait, ok := u.throttle.allow(ip); !ok {
		retryAfter(w, wait)
		u.renderLogin(w, http.StatusTooManyRequests, "Too many failed logins; try again later.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBody)
	if err := r.ParseForm(); err != nil {
		u.renderLogin(w, http.StatusBadRequest, "The login form could not be read.")
		return
	}
	name, hash, ok := u.cfg.Backend.AdminToken(r.PostForm.Get("token"))
	if !ok {
		u.throttle.failed(ip)
		u.cfg.Log.Warn("operator page: login refused", "remote", r.RemoteAddr, "client", ip)
		u.renderLogin(w, http.StatusUnauthorized, "That is not an admin token.")
		return
	}
	if wait, ok := u.throttle.opened(name); !ok {
		retryAfter(w, wait)
		u.cfg.Log.Warn("operator page: too many logins with one token", "token", name, "remote", ip)
		u.renderLogin(w, http.StatusTooManyRequests, "Too many logins with this token; try again later.")
		return
	}
	id, expires := u.sessions.open(name, hash)
	u.setCookie(w, r, id, expires)
	u.cfg.Log.Info("operator page: logged in", "token", name, "remote", r.RemoteAddr)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// logout ends the session and clears the cookie.
func (u *UI) logout(w http.ResponseWriter, r *http.Request) {
	if err := u.origin.Check(r); err != nil {
		u.renderLogin(w, http.StatusForbidden, "Cross-site logout refused.")
		return
	}
	if c, err := r.Cookie(cookieName); err == nil {
		u.sessions.close(c.Value)
	}
	u.clearCookie(w, r)
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
}

// retryAfter sets Retry-After to wait, in whole seconds rounded up.
func retryAfter(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int((wait+time.Second-1)/time.Second))))
}
