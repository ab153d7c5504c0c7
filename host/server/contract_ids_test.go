package server

import "github.com/runedge/runedge/internal/contract"

// runOf is the run behind a response id the server returned
// (contract.RunIDOf), "" for an id that is not one.
func runOf(responseID string) string {
	id, _ := contract.RunIDOf(responseID)
	return id
}
