package app

import (
	"net/http"
	"net/url"

	"github.com/runedge/runedge/examples/appserver/login"
)

// sameOrigin refuses a POST whose Origin is another site. SameSite=Lax
// already keeps the session cookie off other sites' POSTs; this also covers
// sibling subdomains, which count as the same site.
func sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if o := r.Header.Get("Origin"); o != "" {
				u, err := url.Parse(o)
				if err != nil || u.Host != r.Host {
					login.WriteError(w, http.StatusForbidden, "permission_error", "cross_origin",
						"This request came from another site.")
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// pageHeaders sets headers that make the page hard to abuse: scripts and
// connections only from this origin (no inline script, so an injected tag
// cannot run), no framing, no MIME sniffing, no referrer to other sites.
func pageHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}
