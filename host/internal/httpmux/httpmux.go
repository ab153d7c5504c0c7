// Package httpmux is what both of the host's routers (the API's and the
// admin listener's) need outside any chain: dispatch by method with a 405
// that names the allowed methods, the health check, and an error written
// in the OpenAI shape (a 404 for an unknown path). It is small and apart so
// that the admin API does not import the server to route its requests.
package httpmux

import (
	"net/http"
	"sort"
	"strings"

	"github.com/runedge/runedge/filters/apierr"
)

// Methods dispatches on the request method; others get 405 with Allow.
type Methods map[string]http.HandlerFunc

func (m Methods) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h, ok := m[r.Method]; ok {
		h(w, r)
		return
	}
	allow := make([]string, 0, len(m))
	for k := range m {
		allow = append(allow, k)
	}
	sort.Strings(allow)
	e := apierr.New(apierr.CodeMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path+"; use "+strings.Join(allow, ", "))
	e.Allow = strings.Join(allow, ", ")
	WriteError(w, e)
}

// WriteError renders an error outside any chain (router, 405).
func WriteError(w http.ResponseWriter, e *apierr.Error) {
	e.Header(w.Header())
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	w.Write(e.Body())
}

// NotFound answers every path it is given 404, as JSON: the routers' "/".
func NotFound(w http.ResponseWriter, r *http.Request) {
	WriteError(w, apierr.NotFound("unknown path %s", r.URL.Path))
}

// Health answers the health check: the process is up and serving.
func Health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"status":"ok"}`))
}
