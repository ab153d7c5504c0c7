package server

import (
	"fmt"

	"github.com/runedge/runedge/filters/compaction"
	"github.com/runedge/runedge/host/config"
)

// compactionKeys builds the key ring of cfg's compaction.keys, or returns
// the Server's own random key (every generation shares it, so a reload
// keeps items readable; a restart does not).
func (s *Server) compactionKeys(cfg *config.Config) (*compaction.Keys, error) {
	if len(cfg.Compaction.Keys) == 0 {
		return s.ownKeys, nil
	}
	secrets := cfg.Compaction.Secrets()
	keys := make([]compaction.Key, len(secrets))
	for i, k := range cfg.Compaction.Keys {
		keys[i] = compaction.Key{ID: k.ID, Secret: secrets[i]}
	}
	ring, err := compaction.NewKeys(keys)
	if err != nil {
		return nil, fmt.Errorf("compaction.keys: %w", err)
	}
	return ring, nil
}
