// Package servertest runs a real runedge server for tests of other
// packages: real listeners on 127.0.0.1, stopped (as by SIGTERM) when the
// test ends. Build its configuration with host/config/configtest.
package servertest

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/server"
)

// Server is a running server.
type Server struct {
	*server.Server
	// URL and Admin are the base URLs of the API and of the admin listener
	// ("" when admin.listen is off).
	URL, Admin string
	Config     *config.Config
}

// Start validates cfg and serves it (with watchers, see server.Run) until
// the test ends. ctx, when it ends first, stops the server too.
func Start(tb testing.TB, ctx context.Context, cfg *config.Config, watchers ...server.Watcher) *Server {
	tb.Helper()
	if err := cfg.Validate(); err != nil {
		tb.Fatal(err)
	}
	ctx, stop := context.WithCancel(ctx)
	srv, err := server.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		stop()
		tb.Fatal(err)
	}
	s := &Server{Server: srv, Config: cfg}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close(ctx)
		stop()
		tb.Fatal(err)
	}
	s.URL = "http://" + ln.Addr().String()
	ls := server.Listeners{API: ln}
	if cfg.Admin.Listen != "off" {
		if ls.Admin, err = net.Listen("tcp", cfg.Admin.Listen); err != nil {
			ln.Close()
			srv.Close(ctx)
			stop()
			tb.Fatal(err)
		}
		s.Admin = ls.Admin.Addr().String()
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ls, watchers...) }()
	tb.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("server: %v", err)
			}
		case <-time.After(30 * time.Second):
			tb.Error("server did not shut down")
		}
	})
	return s
}
