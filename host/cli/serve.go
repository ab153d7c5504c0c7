package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/server"
)

func serve(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	cfgPath := fs.String("config", "", "configuration file (YAML); defaults apply without one")
	listen := fs.String("listen", "", "listen address (overrides the file's listen)")
	xdsAddr := fs.String("xds", "", "a runedge xds control plane (host:port) to take chains and plugins from")
	node := fs.String("node", "", "this host's node id for --xds (default: the host name)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	if err := defaultToken(cfg, env, *cfgPath == ""); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	var watchers []server.Watcher
	if *cfgPath != "" {
		watchers = append(watchers, server.WatchFile(*cfgPath, 500*time.Millisecond, func(c *config.Config) error {
			return defaultToken(c, env, false)
		}))
	}
	if *xdsAddr != "" {
		w, err := subscribe(cfg, *xdsAddr, *node, log)
		if err != nil {
			return err
		}
		watchers = append(watchers, w)
	}
	ls, err := openListeners(cfg)
	if err != nil {
		return err
	}
	srv, err := server.New(ctx, cfg, log)
	if err != nil {
		ls.close()
		return err
	}
	return srv.Run(ctx, ls.Listeners, watchers...)
}

type listeners struct{ server.Listeners }

// openListeners opens the API and admin listeners before anything else is
// acquired, so a port in use costs nothing to undo.
func openListeners(cfg *config.Config) (listeners, error) {
	var ls listeners
	var err error
	if ls.API, err = net.Listen("tcp", cfg.Listen); err != nil {
		return ls, err
	}
	if cfg.Admin.Listen != "off" {
		if ls.Admin, err = net.Listen("tcp", cfg.Admin.Listen); err != nil {
			ls.close()
			return ls, fmt.Errorf("admin.listen: %w", err)
		}
	}
	return ls, nil
}

func (ls listeners) close() {
	for _, l := range []net.Listener{ls.API, ls.Admin} {
		if l != nil {
			l.Close()
		}
	}
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Default(), nil
	}
	return config.Load(path)
}

// defaultToken gives a configuration without tokens one: SERVICE_TOKEN from
// the environment, or a generated one printed once so that `make run` works
// with no file at all. Only a file-less server (`make run`, one operator)
// makes it an admin token; a configuration file that lists no tokens gets
// an ordinary one, since admin crosses tenants and swaps plugins and must
// be asked for (`admin: true`).
func defaultToken(cfg *config.Config, env Env, fileless bool) error {
	if len(cfg.Tokens) > 0 {
		return nil
	}
	tok := env.Getenv("SERVICE_TOKEN")
	if tok == "" {
		var err error
		if tok, err = newToken(); err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "runedge: no tokens configured and SERVICE_TOKEN is unset; generated a token for this run:\n\n    %s\n\n", tok)
	}
	cfg.Tokens = []config.Token{{Name: "default", Hash: hashToken(tok), Admin: fileless}}
	return cfg.Validate()
}
