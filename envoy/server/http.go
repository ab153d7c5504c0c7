package server

import (
	"encoding/json"
	"net/http"
)

// Status is what GET /status answers: the version being served and, per
// node, the last version each resource type accepted or refused.
type Status struct {
	Version string                `json:"version"`
	Nodes   map[string]NodeStatus `json:"nodes"`
}

// Status reports the version served and what every node said about it.
func (s *Server) Status() Status {
	return Status{Version: s.Version(), Nodes: s.nodes.snapshot()}
}

// handler serves the plugin bytes (GET /plugins/<sha256>) and the rollout
// status (GET /status).
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /plugins/", s.cfg.Store.Handler())
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(s.Status())
	})
	return mux
}
