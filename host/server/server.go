// Package server is runedge's HTTP server: it wires the configuration into a
// generation (stores, plugins, chains), routes the endpoints to their chains,
// reads bodies within limits, renders errors once, and shuts down without
// leaving a run unrecorded.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/plugins/runtime"
	"github.com/runedge/runedge/runner"
)

// Server is a running runedge host.
type Server struct {
	cfg    *config.Config
	log    *slog.Logger
	store  runner.Store
	runs   *runner.Service
	engine *runtime.Engine
	gen    atomic.Pointer[generation]
	http   *http.Server
	admin  *http.Server

	// swapMu serialises reloads and swaps; requests never take it.
	swapMu sync.Mutex
	// closeCtx closes plugins released after their generation retired,
	// outside any request.
	closeCtx context.Context
	metrics  *metrics
	// stopPurge ends the store.retention loop (nil when off).
	stopPurge context.CancelFunc
	// xdsChains are the chains a control plane applied (under swapMu).
	xdsChains map[string]config.Chain
}

// New opens the store, recovers runs a crash left behind, loads the plugins
// and builds the first generation. Nothing listens yet.
func New(ctx context.Context, cfg *config.Config, log *slog.Logger) (_ *Server, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log, closeCtx: context.WithoutCancel(ctx), metrics: newMetrics()}
	defer func() {
		if err != nil {
			s.close(ctx)
		}
	}()
	if s.store, err = OpenStore(ctx, cfg, log); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	agent, err := newAgent(cfg)
	if err != nil {
		return nil, err
	}
	s.runs, err = runner.NewService(ctx, runner.ServiceConfig{
		Store: s.store, Agent: agent, Logger: log,
		RunTimeout:  cfg.Limits.RunTimeout.Std(),
		MaxInFlight: cfg.Limits.MaxInFlight,
		HostID:      cfg.Host.ID,
	})
	if err != nil {
		return nil, err
	}
	if r := cfg.Store.Retention.Std(); r > 0 {
		pctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		s.stopPurge = stop
		go purgeLoop(pctx, s.store, r, log)
	}
	if s.engine, err = runtime.NewEngine(ctx, s.engineConfig(cfg)); err != nil {
		return nil, fmt.Errorf("plugins: %w", err)
	}
	g, err := s.build(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s.install(g)
	s.http = &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	s.admin = &http.Server{
		Handler:           s.adminRoutes(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// ServeAdmin answers the admin API on ln until the server shuts down.
func (s *Server) ServeAdmin(ln net.Listener) error {
	s.log.Info("runedge admin API", "addr", ln.Addr().String())
	err := s.admin.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Handler returns the HTTP handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.http.Handler }

// Runs returns the run service.
func (s *Server) Runs() *runner.Service { return s.runs }

// Serve answers on ln until ctx is done, then shuts down gracefully:
// it stops accepting, lets runs in flight finish for the configured grace
// period, cancels the rest (recorded cancelled, reason shutdown) and closes
// the store. It returns once everything is recorded.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(ln) }()
	s.log.Info("runedge serving", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		s.close(context.WithoutCancel(ctx))
		return err
	case <-ctx.Done():
	}
	return s.shutdown(context.WithoutCancel(ctx))
}

func (s *Server) shutdown(ctx context.Context) error {
	grace := s.cfg.Limits.ShutdownGrace.Std()
	s.log.Info("runedge shutting down", "grace", grace, "in_flight", s.runs.InFlight())
	s.runs.Drain()
	s.admin.Close()
	graceCtx, cancel := context.WithTimeout(ctx, grace)
	err := s.http.Shutdown(graceCtx)
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("grace period over; cancelling runs in flight", "in_flight", s.runs.InFlight())
		s.runs.CancelAll(runner.ReasonShutdown)
		// Handlers now write their error and return; give them a moment.
		finishCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = s.http.Shutdown(finishCtx)
		cancel()
		if err != nil {
			s.http.Close()
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	werr := s.runs.Wait(waitCtx)
	cancel()
	s.close(ctx)
	if werr != nil {
		return fmt.Errorf("shutdown: runs still in flight: %w", werr)
	}
	return nil
}

// close releases everything New acquired, in reverse order.
func (s *Server) close(ctx context.Context) {
	if g := s.gen.Load(); g != nil {
		g.close(ctx)
	}
	if s.engine != nil {
		s.engine.Close(ctx)
	}
	if s.stopPurge != nil {
		s.stopPurge()
	}
	if s.runs != nil {
		s.runs.Close()
	}
	if s.store != nil {
		s.store.Close()
	}
}
