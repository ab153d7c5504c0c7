package server

import (
	"context"
	"time"

	"github.com/runedge/runedge/host/config"
)

// WatchFile is the watcher of a configuration file: every change is loaded,
// passed to prepare (which may complete it, e.g. with a default token; nil
// for none) and reloaded; a change that does not load, prepare or build is
// logged and the running configuration keeps serving.
func WatchFile(path string, interval time.Duration, prepare func(*config.Config) error) Watcher {
	return func(ctx context.Context, s *Server) error {
		config.Watch(ctx, path, interval, func(c *config.Config, err error) {
			if err == nil && prepare != nil {
				err = prepare(c)
			}
			if err == nil {
				err = s.Reload(ctx, c)
			}
			if err != nil {
				s.log.Error("configuration change refused; the running configuration keeps serving", "err", err)
				return
			}
			s.log.Info("configuration reloaded", "file", path)
		})
		return nil
	}
}
