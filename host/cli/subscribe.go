package cli

import (
	"context"
	"log/slog"
	"os"

	"github.com/runedge/runedge/envoy/ecds"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/server"
)

// subscribe takes the host's chains from a control plane over ECDS: every
// update's plugins are fetched, checked against their sha256 and applied
// with the live swap; an update the host cannot apply is NACKed and the
// running chains keep serving. A host with a file configuration keeps
// working while the control plane is away.
//
// It returns the subscription as a watcher for Server.Run, which starts it
// with the server and stops it before the plugin engine closes.
func subscribe(cfg *config.Config, addr, node string, log *slog.Logger) (server.Watcher, error) {
	if node == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, err
		}
		node = h
	}
	sub := &ecds.Subscriber{Addr: addr, NodeID: node, CacheDir: cfg.Path("data/xds-plugins"), Log: log}
	return func(ctx context.Context, srv *server.Server) error {
		return sub.Run(ctx, func(ctx context.Context, chains map[string]ecds.ChainRef) error {
			m := make(map[string]config.Chain, len(chains))
			for ep, c := range chains {
				m[ep] = config.Chain{MapRequest: c.MapRequest.Path, Translate: c.Translate.Path}
			}
			return srv.ApplyChains(ctx, m)
		})
	}, nil
}
