package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/internal/telemetry"
	"github.com/runedge/runedge/host/server"
)

func serve(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	cfgPath := fs.String("config", "", "configuration file (YAML); defaults apply without one")
	listen := fs.String("listen", "", "listen address (overrides the file's listen)")
	var xo xdsClient
	fs.StringVar(&xo.addr, "xds", "", "a runedge xds control plane (host:port) to take chains and plugins from")
	fs.StringVar(&xo.node, "node", "", "this host's node id for --xds, a name of --xds-cert (default: the certificate's common name, or the host name in plaintext)")
	fs.StringVar(&xo.ca, "xds-ca", "", "CA certificate (PEM) the control plane's certificate must be signed by")
	fs.StringVar(&xo.cert, "xds-cert", "", "this host's client certificate (PEM) for the control plane")
	fs.StringVar(&xo.key, "xds-key", "", "the key of --xds-cert (PEM)")
	fs.BoolVar(&xo.insecure, "xds-insecure", false, "talk to the control plane in plaintext, unauthenticated (tests and trusted networks only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath, env)
	if err != nil {
		return err
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	if err := defaultToken(cfg, env, *cfgPath == ""); err != nil {
		return err
	}
	logOut := telemetry.NewLogOutput(env.Stderr, telemetry.AccessFlushInterval, telemetry.AccessBufferBytes)
	defer logOut.Close()
	log := newLogger(cfg, logOut)
	var watchers []server.Watcher
	if *cfgPath != "" {
		watchers = append(watchers, server.WatchFile(*cfgPath, 500*time.Millisecond, func(c *config.Config) error {
			// A reload reads the environment as the start did, so the
			// tracing it configured does not read as a change.
			if err := c.ApplyEnv(env.Getenv); err != nil {
				return err
			}
			return defaultToken(c, env, false)
		}))
	}
	if xo.addr != "" {
		w, err := subscribe(cfg, xo, log)
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

// newLogger is the process log: text, or one JSON object a line with
// log.format: json (for log shippers). The access log goes here too,
// buffered by out for up to a second (telemetry.LogOutput).
func newLogger(cfg *config.Config, out *telemetry.LogOutput) *slog.Logger {
	if cfg.Log.Format == "json" {
		return slog.New(out.JSONHandler())
	}
	return slog.New(out.TextHandler())
}

// loadConfig loads the file at path (the defaults without one) and the
// standard OTEL_* variables of env for what the file leaves unset.
func loadConfig(path string, env Env) (*config.Config, error) {
	cfg := config.Default()
	if path != "" {
		var err error
		if cfg, err = config.Load(path); err != nil {
			return nil, err
		}
	}
	if err := cfg.ApplyEnv(env.Getenv); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
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
