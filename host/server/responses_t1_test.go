package server

import "testing"

// The Responses shape tests (OpenAI's description and Open Responses) drive
// the same calls as tenant t1; these two helpers are that one client.

// postT1 creates a response as tenant t1 and returns the reply body,
// failing the test unless it is a 200.
func postT1(t *testing.T, h *harness, b string) string {
	t.Helper()
	res := h.do("POST", "/v1/responses", b, "x-service-tenant-id", "t1")
	out := string(body(t, res))
	if res.StatusCode != 200 {
		t.Fatalf("POST %s: %d %s", b, res.StatusCode, out)
	}
	return out
}

// getT1 reads /v1/responses/{path} as tenant t1 and returns the reply body
// whatever its status: the shape tests judge the body.
func getT1(t *testing.T, h *harness, path string) string {
	t.Helper()
	return string(body(t, h.do("GET", "/v1/responses/"+path, "", "x-service-tenant-id", "t1")))
}
