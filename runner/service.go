package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/runedge/runedge/internal/lru"
)

// ServiceConfig configures a Service.
type ServiceConfig struct {
	Store Store
	// History keeps stored responses; nil means Store's own, if it
	// implements HistoryStore (a wrapped Store may hide it).
	History HistoryStore
	// Conversations keeps conversations (the OpenAI Conversations API);
	// nil means Store's own, if it has them.
	Conversations ConversationStore
	Agent         Agent
	// RunTimeout is the deadline for a whole run (→ failed/timeout); 0 means
	// none.
	RunTimeout time.Duration
	// MaxInFlight bounds concurrent runs; beyond it Start returns
	// ErrUnavailable. 0 means unlimited.
	MaxInFlight int
	// MaxInFlightPerTenant bounds one tenant's concurrent runs; beyond it
	// Start returns ErrTenantBusy. 0 means unlimited.
	MaxInFlightPerTenant int
	// MaxInFlightPerToken bounds the concurrent runs started with one token
	// (StartSpec.Token), whatever tenants it names; beyond it Start returns
	// ErrTokenBusy. 0 means unlimited.
	MaxInFlightPerToken int
	// MaxBackground bounds concurrent background runs; beyond it Start
	// returns ErrBackgroundBusy. 0 means unlimited.
	MaxBackground int
	// Now is the clock (nil: time.Now); tests pin it.
	Now func() time.Time
	// Logger receives the service's logs (nil: discarded).
	Logger *slog.Logger
	// HostID is this host's id (host.id), recorded on every run. Start-up
	// recovery marks only this host's runs interrupted, and a cancel of
	// another host's run is relayed to it when the store is a CancelRelay.
	HostID string
	// CancelWait bounds how long Cancel waits for another host to record a
	// relayed cancel (default 5s).
	CancelWait time.Duration
	// Observer is told when runs start and end (nil: nobody).
	Observer Observer
	// Bounds bound what a request may resolve from the response history
	// and how many stream events a run keeps (zero fields: defaults).
	Bounds HistoryBounds
	// Usage sums the usage ledger; nil means Store's own, if it keeps one
	// (a wrapped Store may hide it).
	Usage UsageStore
	// Leases: runs held under leases, renewed in batches, taken over when
	// they run out (leasing.go). A zero value keeps no leases.
	Leases LeaseConfig
	// Probe counts what the history holds, so replayed history can be kept
	// between turns (historycache.go); nil means Store's or History's own,
	// if either has it (a wrapped Store may hide it).
	Probe HistoryProbe
}

// Scope is who is asking: a caller sees only its tenant's runs unless it is
// an admin. A non-admin scope with an empty TenantID sees runs of the empty
// tenant by id, but lists nothing: the store reads "" as "every tenant", and
// listing must fail closed.
type Scope struct {
	TenantID string
	Admin    bool
}

// Service manages runs: it admits them, records them before the agent
// starts, runs the agent bound to the request's context, and records exactly
// one outcome per run. It is the only writer of run state in a process, so
// every lifecycle rule is enforced here and in Store.Transition.
type Service struct {
	store      Store
	history    HistoryStore // nil when the store keeps none
	convs      ConversationStore
	agent      Agent
	timeout    time.Duration
	timedOut   error // a run's cause past timeout, made once: every run shares it
	limit      int
	now        func() time.Time
	log        *slog.Logger
	host       string
	relay      CancelRelay // nil: runs of other hosts cannot be cancelled
	stopRelay  context.CancelFunc
	cancelWait time.Duration
	observer   Observer
	bounds     HistoryBounds
	// tenantLimit, tokenLimit and bgLimit bound the runs in flight of one
	// tenant, of one token and in the background (0: none); perTenant,
	// perToken and background count them (under mu).
	tenantLimit, tokenLimit, bgLimit int
	perTenant, perToken              map[string]int
	background                       int

	mu       sync.Mutex
	draining bool
	runs     map[string]*Handle   // admitted and not yet finished
	logs     map[string]*EventLog // stream events of stored responses in flight
	idle     chan struct{}        // nil, or made by Wait and closed when runs drains to empty

	workers *workers // the goroutines runs' agents execute on

	metering meteringHolder // prices and budgets (usage.go)
	usage    UsageStore     // nil when the store keeps no ledger
	lease    *leasing       // nil: runs hold no lease

	probe  HistoryProbe                   // nil: history is read whole every turn
	linker ResponseLinker                 // nil: GetResponse and GetRun (history.go)
	chains *lru.Cache[cacheKey, replayed] // replayed chains by response (historycache.go)
	// convItems: conversations' items by session, as last read
	// (conversations.go).
	convItems *lru.Cache[cacheKey, convRead]
	// opened: sessions known to have a run (freshConversation), each
	// counted as 1 of openedMax.
	opened *lru.Cache[cacheKey, struct{}]
}

// NewService returns a Service. It first marks runs a previous process left
// queued or running as failed/interrupted: no process is executing them any
// more, and leaving them "running" would lie to everyone reading history.
func NewService(ctx context.Context, cfg ServiceConfig) (*Service, error) {
	if cfg.Store == nil || cfg.Agent == nil {
		return nil, errors.New("runner: ServiceConfig needs a Store and an Agent")
	}
	s := &Service{
		store:       cfg.Store,
		agent:       cfg.Agent,
		timeout:     cfg.RunTimeout,
		limit:       cfg.MaxInFlight,
		now:         cfg.Now,
		log:         cfg.Logger,
		host:        cfg.HostID,
		cancelWait:  cfg.CancelWait,
		observer:    cfg.Observer,
		bounds:      cfg.Bounds.withDefaults(),
		tenantLimit: cfg.MaxInFlightPerTenant,
		tokenLimit:  cfg.MaxInFlightPerToken,
		bgLimit:     cfg.MaxBackground,
		perTenant:   map[string]int{},
		perToken:    map[string]int{},
		runs:        map[string]*Handle{},
		logs:        map[string]*EventLog{},
		idle:        make(chan struct{}),
		workers:     newWorkers(workerIdle),
	}
	s.history = cfg.History
	s.usage = cfg.Usage
	if s.usage == nil {
		s.usage, _ = cfg.Store.(UsageStore)
	}
	s.convs = cfg.Conversations
	if s.convs == nil {
		s.convs, _ = cfg.Store.(ConversationStore)
	}
	if s.history == nil {
		s.history, _ = cfg.Store.(HistoryStore)
	}
	s.probe = cfg.Probe
	if s.probe == nil {
		s.probe, _ = cfg.Store.(HistoryProbe)
	}
	if s.probe == nil {
		s.probe, _ = s.history.(HistoryProbe)
	}
	// A wrapped history (tracing) may hide the linker; the probe is the
	// store itself (ServiceConfig.Probe).
	s.linker, _ = s.history.(ResponseLinker)
	if s.linker == nil {
		s.linker, _ = s.probe.(ResponseLinker)
	}
	s.chains = lru.New[cacheKey, replayed](historyCacheBytes)
	s.convItems = lru.New[cacheKey, convRead](historyCacheBytes)
	s.opened = lru.New[cacheKey, struct{}](openedMax)
	if s.now == nil {
		s.now = time.Now
	}
	s.timedOut = fmt.Errorf("%w: run exceeded %s", ErrTimeout, s.timeout)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.cancelWait <= 0 {
		s.cancelWait = 5 * time.Second
	}
	if s.observer == nil {
		s.observer = nopObserver{}
	}
	if cfg.Leases.Store != nil {
		// The runs of this host's previous process are taken over: the
		// foreground ones failed/interrupted, the background ones driven
		// again (leasing.go).
		s.lease = newLeasing(cfg.Leases)
		if err := s.recoverLeased(ctx); err != nil {
			return nil, fmt.Errorf("runner: recover interrupted runs: %w", err)
		}
	} else {
		n, err := s.store.MarkInterrupted(ctx, s.host, s.now().Unix())
		if err != nil {
			return nil, fmt.Errorf("runner: recover interrupted runs: %w", err)
		}
		s.log.Info("runner: marked runs left by a previous process as interrupted", "count", n, "host_id", s.host)
	}
	if relay, ok := s.store.(CancelRelay); ok {
		lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		if err := relay.ListenCancels(lctx, s.host, s.cancelRelayed); err != nil {
			stop()
			return nil, fmt.Errorf("runner: listen for relayed cancels: %w", err)
		}
		s.relay, s.stopRelay = relay, stop
	}
	if s.lease != nil {
		s.startLeasing(ctx)
	}
	return s, nil
}

// Close stops listening for cancels relayed from other hosts and lets the
// idle run goroutines go. Runs in flight are not touched (see CancelAll and
// Wait).
func (s *Service) Close() {
	s.stopLeasing()
	s.workers.close()
	if s.stopRelay != nil {
		s.stopRelay()
	}
}

// cancelRelayed cancels a run of this host on another host's request.
func (s *Service) cancelRelayed(id string) {
	if h := s.inFlight(id); h != nil {
		s.log.Info("runner: cancel relayed from another host", "run_id", id)
		h.cancel(cancelCause{reason: ReasonCancelRequested})
	}
}

// Drain refuses new runs from now on (ErrUnavailable); runs in flight go on.
func (s *Service) Drain() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.draining = true
}

// Draining reports whether Drain was called: the host is shutting down.
func (s *Service) Draining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

// InFlight is the number of runs admitted and not yet finished.
func (s *Service) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.runs)
}

// Wait blocks until no run is in flight, or ctx ends.
func (s *Service) Wait(ctx context.Context) error {
	for {
		s.mu.Lock()
		if len(s.runs) == 0 {
			s.mu.Unlock()
			return nil
		}
		if s.idle == nil {
			// Made when someone waits: a host at one connection drains
			// to empty after every request.
			s.idle = make(chan struct{})
		}
		idle := s.idle
		s.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// CancelAll cancels every run in flight with reason (ReasonShutdown gives
// cancelled/shutdown; "" means ReasonShutdown). Each run's owner still
// finishes it; Wait tells when they all have.
func (s *Service) CancelAll(reason string) {
	if reason == "" {
		reason = ReasonShutdown
	}
	s.mu.Lock()
	hs := make([]*Handle, 0, len(s.runs))
	for _, h := range s.runs {
		hs = append(hs, h)
	}
	s.mu.Unlock()
	for _, h := range hs {
		h.cancel(cancelCause{reason: reason})
	}
}

// admit reserves a slot for h, or refuses.
func (s *Service) admit(h *Handle) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return fmt.Errorf("%w: shutting down", ErrUnavailable)
	}
	if s.limit > 0 && len(s.runs) >= s.limit {
		return fmt.Errorf("%w: %d runs in flight", ErrUnavailable, len(s.runs))
	}
	if s.bgLimit > 0 && h.background && s.background >= s.bgLimit {
		return fmt.Errorf("%w: %d background runs in flight", ErrBackgroundBusy, s.background)
	}
	if s.tokenLimit > 0 && s.perToken[h.token] >= s.tokenLimit {
		return fmt.Errorf("%w: %d runs of this token in flight", ErrTokenBusy, s.tokenLimit)
	}
	if s.tenantLimit > 0 && s.perTenant[h.run.TenantID] >= s.tenantLimit {
		return fmt.Errorf("%w: %d runs of this tenant in flight", ErrTenantBusy, s.tenantLimit)
	}
	s.perTenant[h.run.TenantID]++
	s.perToken[h.token]++
	if h.background {
		s.background++
	}
	s.runs[h.run.ID] = h
	return nil
}

// release frees h's slot.
func (s *Service) release(h *Handle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.runs[h.run.ID]; !ok {
		return
	}
	delete(s.runs, h.run.ID)
	if s.perTenant[h.run.TenantID]--; s.perTenant[h.run.TenantID] <= 0 {
		delete(s.perTenant, h.run.TenantID)
	}
	if s.perToken[h.token]--; s.perToken[h.token] <= 0 {
		delete(s.perToken, h.token)
	}
	if h.background {
		s.background--
	}
	if len(s.runs) == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

func (s *Service) inFlight(id string) *Handle {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id]
}
