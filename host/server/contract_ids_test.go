package server

import (
	"strings"
	"testing"

	"github.com/runedge/runedge/internal/contract"
)

// runOf is the run behind a response id the server returned
// (contract.RunIDOf), "" for an id that is not one.
func runOf(responseID string) string {
	id, _ := contract.RunIDOf(responseID)
	return id
}

// A malformed id (internal/contract refuses it) is answered as an unknown
// id on every route and parameter that takes one (DESIGN's table): 404
// not_found in a path or as conversation (naming it), 400 previous_response_not_found
// as previous_response_id; never a 500, and no run.
func TestMalformedIDsAreUnknownIDs(t *testing.T) {
	h := start(t, nil)
	long := strings.Repeat("a", contract.MaxIDLength)
	tenant := []string{"x-service-tenant-id", "t1"}
	for _, id := range []string{"resp_", "resp_a.b", "resp_a~b", "resp_%C3%A9", "resp_" + long, "run_abc", "conv_abc"} {
		for _, c := range []struct{ method, path string }{
			{"GET", "/v1/responses/" + id}, {"DELETE", "/v1/responses/" + id},
			{"GET", "/v1/responses/" + id + "/input_items"}, {"POST", "/v1/responses/" + id + "/cancel"},
		} {
			t.Run(c.method+" "+c.path, func(t *testing.T) {
				apiError(t, h.do(c.method, c.path, "", tenant...), 404, "not_found", "")
			})
		}
		t.Run("previous_response_id "+id, func(t *testing.T) {
			apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x","previous_response_id":"`+id+`"}`, tenant...),
				400, "previous_response_not_found", "previous_response_id")
		})
	}
	for _, id := range []string{"conv_", "conv_a.b", "conv_%C3%A9", "conv_" + long, "sess_abc", "resp_abc"} {
		for _, c := range []struct{ method, path string }{
			{"GET", "/v1/conversations/" + id}, {"DELETE", "/v1/conversations/" + id},
			{"GET", "/v1/conversations/" + id + "/items"}, {"GET", "/v1/conversations/" + id + "/items/msg_abc"},
		} {
			t.Run(c.method+" "+c.path, func(t *testing.T) {
				apiError(t, h.do(c.method, c.path, "", tenant...), 404, "not_found", "")
			})
		}
		t.Run("conversation "+id, func(t *testing.T) {
			apiError(t, h.do("POST", "/v1/responses", `{"model":"service","input":"x","conversation":"`+id+`"}`, tenant...),
				404, "not_found", "conversation")
		})
	}
}
