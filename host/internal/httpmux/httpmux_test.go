package httpmux

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tidwall/gjson"
)

// A method a route does not serve is a 405 naming the ones it does, in
// the OpenAI error shape; a served one reaches its handler.
func TestMethods(t *testing.T) {
	m := Methods{http.MethodGet: Health, http.MethodDelete: Health}
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("POST", "/x", nil))
	if rec.Code != 405 || rec.Header().Get("Allow") != "DELETE, GET" || gjson.Get(rec.Body.String(), "error.code").Str != "method_not_allowed" {
		t.Fatalf("POST: %d %q %s", rec.Code, rec.Header().Get("Allow"), rec.Body)
	}
	rec = httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != 200 || gjson.Get(rec.Body.String(), "status").Str != "ok" {
		t.Fatalf("GET: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	NotFound(rec, httptest.NewRequest("GET", "/nowhere", nil))
	if rec.Code != 404 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("unknown path: %d %s", rec.Code, rec.Body)
	}
}
