package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/runedge/runedge/host/internal/httpmux"
	"github.com/runedge/runedge/runner"
)

// ErrClosed is returned by Reload, ApplyChains and SwapPlugin once the
// server has shut down: a watcher or subscriber that outlived it must not
// build a generation on a closed engine.
var ErrClosed = errors.New("server: closed")

// Watcher runs beside the server for its whole life and may call Reload,
// ApplyChains or SwapPlugin: the configuration file watcher, the xDS
// subscriber. Its context ends after the runs in flight are drained and
// before the plugin engine closes, so nothing it does can reach a closed
// engine. It returns nil when its context ends; an error ends the server.
type Watcher func(ctx context.Context, s *Server) error

// Listeners are what Run serves on. Run owns them from the call on: it
// closes them whatever happens.
type Listeners struct {
	// API answers the endpoints.
	API net.Listener
	// Admin, when not nil, answers the operator API (admin.listen).
	Admin net.Listener
}

// Run serves until ctx ends or any of its parts fails, then shuts down in
// order and returns once everything it started has stopped:
//
//  1. stop accepting (both listeners) and refuse new runs;
//  2. let requests in flight finish within limits.shutdown_grace;
//  3. cancel the runs still going (recorded cancelled, reason shutdown) and
//     wait for their handlers to record them;
//  4. stop the watchers (config file, xDS subscriber);
//  5. close the generation's plugins and the plugin engine;
//  6. close the store.
//
// Every goroutine Run starts is joined before it returns (errgroup); a
// server that has returned from Run refuses Reload with ErrClosed. Run may
// be called once; New's resources are released even when it fails early.
func (s *Server) Run(ctx context.Context, ls Listeners, watchers ...Watcher) error {
	if ls.API == nil {
		if ls.Admin != nil {
			ls.Admin.Close()
		}
		s.Close(context.WithoutCancel(ctx))
		return errors.New("server: Run needs an API listener")
	}
	g, gctx := errgroup.WithContext(ctx)
	// Watchers outlive the request side: their context ends at step 4. A
	// watcher that fails ends the server (errgroup), since nobody would
	// apply the changes it was there for.
	watchCtx, stopWatchers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWatchers()
	var watching sync.WaitGroup

	s.log.Info("runedge serving", "addr", ls.API.Addr().String())
	g.Go(func() error { return serveErr("api", s.http.Serve(holdListener{ls.API})) })
	if ls.Admin != nil {
		s.log.Info("runedge admin API", "addr", ls.Admin.Addr().String())
		warnNonLoopback(s.log, ls.Admin.Addr())
		g.Go(func() error { return serveErr("admin", s.admin.Serve(ls.Admin)) })
	}
	for _, w := range watchers {
		watching.Add(1)
		g.Go(func() error {
			defer watching.Done()
			if err := w(watchCtx, s); err != nil && watchCtx.Err() == nil {
				return err
			}
			return nil
		})
	}
	g.Go(func() error {
		<-gctx.Done()
		return s.shutdown(context.WithoutCancel(ctx), ls.Admin != nil, func() {
			stopWatchers()
			watching.Wait()
		})
	})
	return g.Wait()
}

// serveErr turns the normal end of an http.Server into nil.
func serveErr(what string, err error) error {
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("%s listener: %w", what, err)
}

// Serve answers on ln until ctx ends, with no admin listener and no
// watchers: Run(ctx, Listeners{API: ln}).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return s.Run(ctx, Listeners{API: ln})
}

// shutdown is Run's ordered stop; see Run. stopWatchers is step 4.
func (s *Server) shutdown(ctx context.Context, admin bool, stopWatchers func()) error {
	grace := s.cfg.Limits.ShutdownGrace.Std()
	s.log.Info("runedge shutting down", "grace", grace, "in_flight", s.runs.InFlight())
	// 1. Stop accepting (/healthz answers 503 draining from now on, so a
	// gateway that checks it stops routing here). The admin API serves no
	// runs: its requests get a short moment, then their connections close.
	s.runs.Drain()
	// Background runs are handed to the fleet at once, not cancelled:
	// their leases are released, so another host (or this one at its next
	// start) drives them again from their recorded requests.
	if n := s.runs.HandOff(ctx); n > 0 {
		s.log.Info("background runs handed off", "count", n)
	}
	var adminDone chan struct{}
	if admin {
		adminDone = make(chan struct{})
		go func() {
			defer close(adminDone)
			actx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			if s.admin.Shutdown(actx) != nil {
				s.admin.Close()
			}
		}()
	}
	// 2. Drain within the grace period.
	// Sockets are hijacked, out of Shutdown's sight: they end after
	// their turn in flight, within the same grace.
	s.sockets.Drain()
	graceCtx, cancel := context.WithTimeout(ctx, grace)
	err := s.http.Shutdown(graceCtx)
	if err == nil {
		err = s.sockets.Wait(graceCtx)
	}
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		// 3. Cancel what is left; handlers then write their error (or hit
		// their write deadline) and return.
		s.log.Warn("grace period over; cancelling runs in flight", "in_flight", s.runs.InFlight())
		s.runs.CancelAll(runner.ReasonShutdown)
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
	if adminDone != nil {
		<-adminDone
	}
	// 4. Watchers and subscriber: after this nothing calls Reload.
	stopWatchers()
	// 5, 6. Engine, then store.
	s.Close(ctx)
	if werr != nil {
		return fmt.Errorf("shutdown: runs still in flight: %w", werr)
	}
	return nil
}

// Close releases what New acquired (generation, plugin engine, store), in
// that order, once; later Reloads fail with ErrClosed. Run calls it; call it
// yourself only for a server that is never Run.
func (s *Server) Close(ctx context.Context) {
	s.swapMu.Lock()
	already := s.closed
	s.closed = true
	s.swapMu.Unlock()
	if !already {
		s.close(ctx)
	}
}

// health answers /healthz: 200 while serving, 503 {"status":"draining"}
// once shutdown has begun, so a gateway's health check takes the host out
// of rotation before its listener closes (docs/operations.md).
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if s.runs.Draining() {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"status":"draining"}`))
		return
	}
	httpmux.Health(w, r)
}
