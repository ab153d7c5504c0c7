package server

import (
	"fmt"

	"github.com/runedge/runedge/filters/compaction"
	"github.com/runedge/runedge/host/config"
)

// compactionKeys builds the key ring of cfg's compaction.keys, or returns
// the Server's own random key (compaction.Setup).
func (s *Server) compactionKeys(cfg *config.Config) (*compaction.Keys, error) {
	ring, err := compaction.Setup(cfg.Compaction, s.ownKeys)
	if err != nil {
		return nil, fmt.Errorf("compaction.keys: %w", err)
	}
	return ring, nil
}
