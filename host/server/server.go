// Package server is runedge's HTTP server: it wires the configuration into a
// generation (stores, plugins, chains), routes the endpoints to their chains,
// reads bodies within limits, renders errors once, and shuts down without
// leaving a run unrecorded.
package server

import (
	"context"
	"fmt"
	"github.com/runedge/runedge/filters/compaction"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runedge/runedge/filters/auth"
	bodystage "github.com/runedge/runedge/filters/body"
	"github.com/runedge/runedge/host/api"
	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/host/internal/admin"
	"github.com/runedge/runedge/host/internal/admin/ui"
	"github.com/runedge/runedge/host/internal/gcfloor"
	"github.com/runedge/runedge/host/internal/heaptrim"
	"github.com/runedge/runedge/host/internal/telemetry"
	"github.com/runedge/runedge/host/server/internal/socket"
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
	// ownKeys seal compaction items when compaction.keys is empty: random,
	// for the life of the Server (compaction.go).
	ownKeys *compaction.Keys
	http    *http.Server
	admin   *http.Server

	// swapMu serialises reloads and swaps; requests never take it.
	swapMu sync.Mutex
	// closeCtx closes plugins released after their generation retired,
	// outside any request.
	closeCtx context.Context
	metrics  *telemetry.Metrics
	// tracing is nil when tracing is off (tracing.go).
	tracing *telemetry.Tracing
	// stopPurge ends the store.retention loop and waits for it to return
	// (nil when off): the store closes after it.
	stopPurge func()
	// stopRates ends the loop that drops the fleet's past rate windows and
	// waits for it (nil when the store is not shared).
	stopRates func()
	// stopFloor ends this server's GC heap floor (host.heap_floor_bytes).
	stopFloor func()
	stopTrim  func()
	// xdsChains are the chains a control plane applied (under swapMu).
	xdsChains map[string]config.Chain
	// limits are the rate limits: on the server, not in a generation, so
	// that a reload does not refill every bucket.
	limits *auth.Limits
	// bodies bound the request bytes processed at once
	// (limits.max_bytes_in_flight): on the server, not in a generation, so
	// that requests in flight across a reload count once.
	bodies *bodystage.Gate
	// budgets are the budgets' counters: on the server, not in a
	// generation, so a reload keeps what was spent (usage.go).
	budgets runner.BudgetCounter
	// closed is set (under swapMu) once Close has begun: no generation is
	// built after it.
	closed bool
	// swaps is the history of reloads and plugin swaps (operator page).
	swaps admin.SwapHistory
	// ops is the admin API and the operator page (host/internal/admin),
	// served on the admin listener; uiRuns is the page's live stream of
	// runs starting and ending.
	ops    *admin.Admin
	uiRuns *ui.Hub
	// replays counts each tenant's stream readers (host/api).
	replays api.Replays
	// sockets are the open WebSockets of /v1/responses (socket.go).
	sockets *socket.Hub
}

// New opens the store, recovers runs a crash left behind, loads the plugins
// and builds the first generation. Nothing listens yet.
func New(ctx context.Context, cfg *config.Config, log *slog.Logger) (_ *Server, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log, limits: auth.NewLimits(0), bodies: bodystage.NewGate(cfg.Limits.MaxBytesInFlight, cfg.Limits.BytesInFlightWait.Std()), closeCtx: context.WithoutCancel(ctx), metrics: telemetry.NewMetrics(cfg.Metrics.TenantLabel),
		uiRuns: ui.NewHub(), sockets: socket.NewHub(), ownKeys: compaction.ProcessKeys()}
	defer func() {
		if err != nil {
			s.close(ctx)
		}
	}()
	if s.tracing, err = telemetry.NewTracing(ctx, cfg.Tracing, cfg.Host.ID, log); err != nil {
		return nil, err
	}
	if s.store, err = OpenStore(ctx, cfg, log); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	agent, release, err := newAgent(cfg, s.tracing.Tracer())
	if err != nil {
		return nil, err
	}
	// Leases are the raw store's: the metrics and tracing wrappers below
	// hide its optional interfaces.
	store, history := telemetry.TraceStore(telemetry.InstrumentStore(s.store, s.metrics), historyOf(s.store), s.tracing.Tracer(), cfg.Store.Driver)
	var leases runner.LeaseConfig
	if ls, ok := s.store.(runner.LeaseStore); ok {
		leases = runner.LeaseConfig{Store: ls, Length: cfg.Runs.Lease.Std(), Renew: cfg.Runs.LeaseRenew.Std(),
			MaxDrives: cfg.Runs.MaxDrives, Observer: s.metrics.Leases(),
			// A background response taken over streams its new attempt
			// into its event log, mapped by the generation serving then.
			Redrive: api.Redrive(store, history, s.responsesResult)}
	}
	s.runs, err = runner.NewService(ctx, runner.ServiceConfig{
		Store: store, History: history, Conversations: conversationsOf(s.store), Agent: agent, Logger: log, Observer: observers{s.metrics, s.uiRuns},
		Usage:                usageOf(s.store),
		Probe:                probeOf(s.store),
		RunTimeout:           cfg.Limits.RunTimeout.Std(),
		MaxInFlight:          cfg.Limits.MaxInFlight,
		MaxInFlightPerTenant: cfg.Limits.MaxInFlightPerTenant,
		MaxInFlightPerToken:  cfg.Limits.MaxInFlightPerToken,
		MaxBackground:        cfg.Limits.MaxBackground,
		HostID:               cfg.Host.ID,
		Leases:               leases,
		Bounds: runner.HistoryBounds{MaxReferences: cfg.Limits.History.MaxReferences,
			MaxReferenceBytes: cfg.Limits.History.MaxReferenceBytes, MaxHistoryBytes: cfg.Limits.History.MaxHistoryBytes,
			MaxStoredEvents: cfg.Limits.History.MaxStoredEvents},
	})
	if err != nil {
		return nil, err
	}
	if r := cfg.Store.Retention.Std(); r > 0 {
		s.stopPurge = startPurge(ctx, s.store, r, log)
	}
	s.metrics.InFlight(s.runs)
	s.metrics.BytesInFlight(s.bodies.InFlight, s.bodies.Waiting)
	s.shareRates(ctx)
	if s.engine, err = runtime.NewEngine(ctx, s.engineConfig(cfg)); err != nil {
		return nil, fmt.Errorf("plugins: %w", err)
	}
	g, err := s.build(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s.install(g)
	if g.fresh {
		returnHeap() // before serving: nothing waits for it
	}
	// After the start-up compile, whose heap the floor must not hold.
	var floorOn bool
	if s.stopFloor, floorOn = gcfloor.Start(cfg.Host.HeapFloorBytes); floorOn {
		log.Debug("gc heap floor", "bytes", cfg.Host.HeapFloorBytes)
	}
	// A burst's heap and idle upstream connections back to the OS once the
	// host is quiet (RATIONALE.md, "Peak RSS: what a host holds").
	s.stopTrim = heaptrim.Start(time.Second, 4<<20, release)
	s.http = &http.Server{
		Handler: telemetry.Observe(s.routes(), s.metrics, s.tracing, s.log),
		// Headers have a deadline here; the body has its own in the body
		// stage, and every write one per flush (filters.Reply): a
		// server-wide ReadTimeout or WriteTimeout would cut long streams.
		ReadHeaderTimeout: cfg.Limits.ReadHeaderTimeout.Std(),
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnContext:       holdContext,
	}
	s.ops = admin.New(admin.Config{Host: adminHost{s}, Fail: s.fail, Start: cfg, Registry: s.metrics.Registry(), Runs: s.uiRuns, Log: log})
	// The admin API streams nothing but the operator page's run stream,
	// which sets a deadline per write: whole-request deadlines are right.
	s.admin = &http.Server{
		Handler:           s.ops.Handler(),
		ReadHeaderTimeout: cfg.Limits.ReadHeaderTimeout.Std(),
		ReadTimeout:       cfg.Limits.ReadHeaderTimeout.Std() + cfg.Limits.ReadBodyTimeout.Std(),
		WriteTimeout:      cfg.Limits.ReadHeaderTimeout.Std() + cfg.Limits.ReadBodyTimeout.Std() + cfg.Limits.WriteTimeout.Std(),
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	s.admin.RegisterOnShutdown(s.uiRuns.Close) // end the live streams, or Shutdown waits for them
	return s, nil
}

// Handler returns the HTTP handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.http.Handler }

// Runs returns the run service.
func (s *Server) Runs() *runner.Service { return s.runs }

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
	if s.stopRates != nil {
		s.stopRates()
	}
	if s.stopTrim != nil {
		s.stopTrim()
	}
	if s.stopFloor != nil {
		s.stopFloor()
	}
	if s.runs != nil {
		s.runs.Close()
	}
	if s.store != nil {
		s.store.Close()
	}
	// Last: the spans of everything above are flushed, for at most 5 s:
	// a collector that does not answer must not hold the exit.
	if s.tracing != nil {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if err := s.tracing.Shutdown(tctx); err != nil {
			s.log.Warn("tracing: flushing spans at shutdown", "err", err)
		}
		cancel()
	}
}

// observers tells several runner.Observers about each run, in order.
type observers []runner.Observer

func (o observers) RunStarted(r *runner.Run) {
	for _, x := range o {
		x.RunStarted(r)
	}
}

func (o observers) RunFinished(r *runner.Run) {
	for _, x := range o {
		x.RunFinished(r)
	}
}
