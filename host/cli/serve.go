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
	var xo xdsClient
	fs.StringVar(&xo.addr, "xds", "", "a runedge xds control plane (host:port) to take chains and plugins from")
	fs.StringVar(&xo.node, "node", "", "this host's node id for --xds (default: the host name)")
	fs.StringVar(&xo.ca, "xds-ca", "", "CA certificate (PEM) the control plane's certificate must be signed by")
	fs.StringVar(&xo.cert, "xds-cert", "", "this host's client certificate (PEM) for the control plane")
	fs.StringVar(&xo.key, "xds-key", "", "the key of --xds-cert (PEM)")
	fs.BoolVar(&xo.insecure, "xds-insecure", false, "talk to the control plane in plaintext, unauthenticated (tests and trusted networks only)")
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
	if err := defaultToken(cfg, env); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	srv, err := server.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	if cfg.Admin.Listen != "off" {
		aln, err := net.Listen("tcp", cfg.Admin.Listen)
		if err != nil {
			ln.Close()
			return fmt.Errorf("admin.listen: %w", err)
		}
		go func() {
			if err := srv.ServeAdmin(aln); err != nil {
				log.Error("admin listener stopped", "err", err)
			}
		}()
	}
	if xo.addr != "" {
		if err := subscribe(ctx, srv, cfg, xo, log); err != nil {
			ln.Close()
			return err
		}
	}
	if *cfgPath != "" {
		go config.Watch(ctx, *cfgPath, 500*time.Millisecond, func(c *config.Config, err error) {
			if err == nil {
				err = defaultToken(c, env)
			}
			if err == nil {
				err = srv.Reload(ctx, c)
			}
			if err != nil {
				log.Error("configuration change refused; the running configuration keeps serving", "err", err)
				return
			}
			log.Info("configuration reloaded", "file", *cfgPath)
		})
	}
	return srv.Serve(ctx, ln)
}

func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Default(), nil
	}
	return config.Load(path)
}

// defaultToken gives a configuration without tokens one: SERVICE_TOKEN from
// the environment, or a generated one printed once so that `make run` works
// with no file at all. That token is an admin token.
func defaultToken(cfg *config.Config, env Env) error {
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
	// The one token of a file-less server is also its operator's: admin,
	// so that `runedge plugin swap` works against `make run`.
	cfg.Tokens = []config.Token{{Name: "default", Hash: hashToken(tok), Admin: true}}
	return cfg.Validate()
}
