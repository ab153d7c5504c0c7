package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/runedge/runedge/internal/contract"
)

// The service's side of leases (lease.go): the runs it starts take a lease
// with their start insert; one goroutine renews every lease it holds in one
// store call per interval and, in the same tick, takes over the runs whose
// lease ran out anywhere in the fleet; a run whose lease this host lost is
// stopped and writes nothing more.

// Lease settings' defaults: a dead host's runs are taken over within
// DefaultLease + DefaultLeaseRenew (13 s) of its last renewal.
const (
	DefaultLease      = 10 * time.Second
	DefaultLeaseRenew = 3 * time.Second
	DefaultMaxDrives  = 3
)

// ReasonMaxDrives: a background run whose host stopped before it finished
// was taken over and driven again as many times as runs.max_drives allows,
// and then failed.
const ReasonMaxDrives = "max_drives"

// LeaseConfig configures leases (ServiceConfig.Leases).
type LeaseConfig struct {
	// Store keeps the leases; nil: runs take none (and a host's start
	// marks its runs interrupted instead of taking them over).
	Store LeaseStore
	// Length is how long a lease holds without a renewal (default
	// DefaultLease); Renew how often a host renews (default
	// DefaultLeaseRenew), which must be well under Length.
	Length, Renew time.Duration
	// MaxDrives bounds how many times a background run is driven, its
	// first drive included (default DefaultMaxDrives); past it a run
	// taken over fails with ReasonMaxDrives.
	MaxDrives int
	// Redrive drives a background run taken over from another host (or
	// this host's previous process) once its agent has started: it reads
	// its events and calls Finish, as the owner of a new run does. nil:
	// the service drives it (events discarded, Finish with the agent's
	// result).
	Redrive func(ctx context.Context, h *Handle)
	// Observer is told about leases (nil: nobody).
	Observer LeaseObserver
}

// LeaseObserver is told about the service's leases (metrics).
type LeaseObserver interface {
	// LeasesHeld is how many leases the host holds, after each renewal.
	LeasesHeld(n int)
	// TakenOver counts a run taken over, by what became of it:
	// "redriven", "interrupted" (a foreground run) or "max_drives".
	TakenOver(outcome string)
	// FencedWrite counts a write refused because the lease was lost.
	FencedWrite()
}

type nopLeaseObserver struct{}

func (nopLeaseObserver) LeasesHeld(int)   {}
func (nopLeaseObserver) TakenOver(string) {}
func (nopLeaseObserver) FencedWrite()     {}

// leasing is the service's lease state.
type leasing struct {
	store     LeaseStore
	length    time.Duration
	renew     time.Duration
	maxDrives int
	redrive   func(context.Context, *Handle)
	obs       LeaseObserver
	stop      context.CancelFunc
	done      chan struct{}
	lastOK    atomic.Int64 // UnixNano of the last renewal that reached the store
}

func newLeasing(c LeaseConfig) *leasing {
	l := &leasing{store: c.Store, length: c.Length, renew: c.Renew, maxDrives: c.MaxDrives, redrive: c.Redrive, obs: c.Observer}
	if l.length <= 0 {
		l.length = DefaultLease
	}
	if l.renew <= 0 {
		l.renew = min(DefaultLeaseRenew, l.length/3)
	}
	if l.maxDrives <= 0 {
		l.maxDrives = DefaultMaxDrives
	}
	if l.obs == nil {
		l.obs = nopLeaseObserver{}
	}
	return l
}

// leaseOf gives run a new run's lease, when the service keeps leases.
func (s *Service) leaseOf(run *Run) {
	if s.lease == nil {
		return
	}
	run.LeaseToken = 1
	run.LeaseExpiresAt = s.now().Add(s.lease.length).UnixMilli()
}

// recoverLeased takes over, at the start, the runs this host's previous
// process left (and those expired anywhere), in place of MarkInterrupted.
func (s *Service) recoverLeased(ctx context.Context) error {
	now := s.now()
	runs, err := s.lease.store.AcquireExpired(ctx, LeaseClaim{HostID: s.host, DeadHost: s.host,
		Now: now.UnixMilli(), Until: now.Add(s.lease.length).UnixMilli()})
	if err != nil {
		return err
	}
	s.log.Info("runner: took over the runs left by a previous process", "count", len(runs), "host_id", s.host)
	for i := range runs {
		s.settle(ctx, runs[i])
	}
	return nil
}

// startLeasing starts the renewal and takeover loop.
func (s *Service) startLeasing(ctx context.Context) {
	lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.lease.stop, s.lease.done = stop, make(chan struct{})
	s.lease.lastOK.Store(time.Now().UnixNano())
	go func() {
		defer close(s.lease.done)
		t := time.NewTicker(s.lease.renew)
		defer t.Stop()
		for {
			select {
			case <-lctx.Done():
				return
			case <-t.C:
			}
			began := s.now()
			s.renewLeases(lctx)
			if s.now().Sub(began) >= s.lease.length-s.lease.renew {
				// The renewal waited in the store's queue (behind a long
				// write) until the leases it wrote, counted from its
				// call, had run out or nearly: a takeover now would find
				// this host's own live runs expired and fence their
				// ends. The next tick renews them again first.
				continue
			}
			s.takeOver(lctx)
		}
	}()
}

// stopLeasing stops the loop and waits for it.
func (s *Service) stopLeasing() {
	if s.lease != nil && s.lease.stop != nil {
		s.lease.stop()
		<-s.lease.done
	}
}

// held lists the leases of the runs in flight here.
func (s *Service) held() []Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Lease, 0, len(s.runs))
	for id, h := range s.runs {
		if h.lease != 0 && h.leased.Load() && !h.ending.Load() && !h.leaseLost.Load() {
			out = append(out, Lease{RunID: id, Token: h.lease})
		}
	}
	return out
}

// renewLeases renews every lease held here in one store call. A lease the
// store reports lost stops its run; when no renewal has reached the store
// for a whole lease, every lease is given up, since another host may have
// taken the runs over meanwhile.
func (s *Service) renewLeases(ctx context.Context) {
	held := s.held()
	s.lease.obs.LeasesHeld(len(held))
	if len(held) == 0 {
		s.lease.lastOK.Store(time.Now().UnixNano())
		return
	}
	lost, err := s.lease.store.RenewLeases(ctx, held, s.now().Add(s.lease.length).UnixMilli())
	if err != nil {
		s.log.Warn("runner: cannot renew leases", "count", len(held), "err", err)
		if time.Since(time.Unix(0, s.lease.lastOK.Load())) < s.lease.length {
			return
		}
		lost = lost[:0]
		for _, l := range held {
			lost = append(lost, l.RunID)
		}
	} else {
		s.lease.lastOK.Store(time.Now().UnixNano())
	}
	for _, id := range lost {
		// A run whose end is being written meanwhile ended its own lease.
		if h := s.inFlight(id); h != nil && !h.ending.Load() {
			h.loseLease()
		}
	}
}

// loseLease stops a run whose lease this host no longer holds: its agent
// is cancelled and its owner's Finish writes nothing.
func (h *Handle) loseLease() {
	if h.leaseLost.Swap(true) {
		return
	}
	h.svc.log.Warn("runner: lease lost; the run is another host's now", "run_id", h.run.ID, "token", h.lease)
	h.cancel(cancelCause{reason: ReasonInterrupted})
}

// fencedEvents counts a batch of events the store refused because run id's
// lease token is no longer lease, and stops the run's drive here if it is
// still in flight: another host took it over.
func (s *Service) fencedEvents(id string, lease int64) {
	if s.lease != nil {
		s.lease.obs.FencedWrite()
	}
	if h := s.inFlight(id); h != nil && h.lease == lease && !h.ending.Load() {
		h.loseLease()
	}
}

// takeOver takes the runs whose lease ran out and settles each.
func (s *Service) takeOver(ctx context.Context) {
	s.mu.Lock()
	draining := s.draining
	limit := 32
	if s.bgLimit > 0 {
		limit = min(limit, s.bgLimit-s.background)
	}
	s.mu.Unlock()
	if draining || limit <= 0 {
		return
	}
	now := s.now()
	if s.startOutlivesLease(now) {
		return
	}
	runs, err := s.lease.store.AcquireExpired(ctx, LeaseClaim{HostID: s.host, Limit: limit,
		Now: now.UnixMilli(), Until: now.Add(s.lease.length).UnixMilli()})
	if err != nil {
		s.log.Warn("runner: cannot take over expired leases", "err", err)
		return
	}
	for i := range runs {
		s.settle(ctx, runs[i])
	}
}

// startOutlivesLease reports whether a run of this host's is still in its
// start's write (not yet leased, so not renewed) while its first lease
// runs out before the next renewal. The takeover's store call waits for
// the writer, which that start holds; once it commits, the call would
// find the run's lease expired and take this host's own live run over,
// fencing its end (a 1 MB stored input under -race on a loaded machine
// took 12 s to commit against a 10 s lease). A tick that finds one
// takes nothing; the run is renewed with the others once its start
// returns. Runs in flight are few, and this runs once per renewal.
func (s *Service) startOutlivesLease(now time.Time) bool {
	soon := now.Add(s.lease.renew).UnixMilli()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.runs {
		if h.lease != 0 && !h.leased.Load() && h.run.LeaseExpiresAt <= soon {
			return true
		}
	}
	return false
}

// recordedBackground reports whether a recorded request asked for a
// background run.
func recordedBackground(req []byte) (Request, bool) {
	var r Request
	if len(req) == 0 || json.Unmarshal(req, &r) != nil {
		return Request{}, false
	}
	return r, r.Background
}

// settle decides what becomes of a run taken over: a foreground run is
// failed/interrupted (its client's connection died with its host), a
// background one is driven again unless it has been driven
// runs.max_drives times already.
func (s *Service) settle(ctx context.Context, r Run) {
	req, bg := recordedBackground(r.Request)
	switch {
	case !bg:
		s.endTaken(ctx, r, ReasonInterrupted, interruptedMessage)
		s.lease.obs.TakenOver("interrupted")
	case r.LeaseToken > int64(s.lease.maxDrives):
		s.endTaken(ctx, r, ReasonMaxDrives, fmt.Sprintf(
			"the run's host stopped before it finished, %d times (runs.max_drives is %d): it is not driven again",
			r.LeaseToken-1, s.lease.maxDrives))
		s.lease.obs.TakenOver(ReasonMaxDrives)
	default:
		if err := s.redrive(ctx, r, req); err != nil {
			s.log.Warn("runner: cannot drive a run taken over", "run_id", r.ID, "err", err)
			if errors.Is(err, errNoRoom) {
				// No room here (draining, at a limit): another host
				// takes it at once.
				s.lease.store.ReleaseLeases(ctx, []Lease{{RunID: r.ID, Token: r.LeaseToken}})
				return
			}
			s.endTaken(ctx, r, ReasonFailed, "the run could not be driven again: "+err.Error())
			return
		}
		s.lease.obs.TakenOver("redriven")
	}
}

const interruptedMessage = "the host running the run stopped before it finished"

// errNoRoom: a run taken over was not admitted here (draining, or at one
// of the in-flight bounds); its lease is released for another host.
var errNoRoom = errors.New("no room for the run on this host")

// endTaken fails a run taken over, fenced by the lease just taken.
func (s *Service) endTaken(ctx context.Context, r Run, reason, msg string) {
	now := s.now().Unix()
	err := s.store.Transition(ctx, r.ID, Transition{Status: StatusFailed, Reason: reason, EndedAt: &now,
		Error: &ErrorInfo{Code: reason, Message: msg}, Lease: r.LeaseToken})
	if errors.Is(err, ErrFenced) {
		s.lease.obs.FencedWrite()
	}
	if err != nil {
		s.log.Warn("runner: cannot end a run taken over", "run_id", r.ID, "err", err)
		return
	}
	s.log.Info("runner: run taken over and ended", "run_id", r.ID, "reason", reason, "from_host", r.HostID)
	ended := r
	ended.Status, ended.StatusReason, ended.EndedAt = StatusFailed, reason, &now
	s.observer.RunFinished(&ended)
}

// redrive drives background run r again from its recorded request, under
// the lease just taken: a new attempt of the same run.
func (s *Service) redrive(ctx context.Context, r Run, req Request) error {
	spec := StartSpec{Endpoint: r.Endpoint, Model: r.Model, TenantID: r.TenantID, Actor: r.Actor, Request: req,
		RequestID: r.RequestID, CorrelationID: r.CorrelationID}
	run := r
	run.Request = nil
	run.Status = StatusRunning
	h := newHandle(context.WithoutCancel(ctx), s, run, req.Stream)
	h.lease = r.LeaseToken
	h.leased.Store(true)
	h.stored = !req.NoStore && s.history != nil && r.Endpoint == contract.EndpointResponses
	h.noStore, h.background, h.redriven = req.NoStore, true, true
	h.logged = s.history != nil && r.Endpoint == contract.EndpointNative
	if err := s.admit(h); err != nil {
		h.discard()
		return fmt.Errorf("%w: %w", errNoRoom, err)
	}
	// The history is read inside the slot, as Start reads it.
	agentInput, _, err := s.prepare(ctx, &spec, true)
	if err != nil {
		h.discard()
		s.release(h)
		return err
	}
	agentReq := req
	agentReq.Input = agentInput
	if log := h.EventLog(); log != nil {
		// The new attempt's events follow the stored ones of the
		// attempts before it.
		n, err := s.storedEventCount(ctx, r.ID)
		if err != nil {
			h.discard()
			s.release(h)
			return err
		}
		log.mu.Lock()
		log.n = n
		log.mu.Unlock()
	}
	s.log.Info("runner: driving a run taken over again", "run_id", r.ID, "drive", r.LeaseToken, "from_host", r.HostID)
	started := h.run
	s.observer.RunStarted(&started)
	s.workers.run(func() { h.execute(s.agent, agentReq) })
	if s.lease.redrive != nil {
		go s.lease.redrive(h.parent, h)
		return nil
	}
	go func() {
		for range h.Events() {
		}
		res, err := h.Wait()
		h.Finish(&res, err)
		if log := h.EventLog(); log != nil {
			log.Close(h.parent)
		}
	}()
	return nil
}

// storedEventCount is the sequence number the next stored event of run id
// takes: one past the last stored.
func (s *Service) storedEventCount(ctx context.Context, id string) (int, error) {
	if s.history == nil {
		return 0, nil
	}
	next, after := 0, -1
	for {
		evs, err := s.history.Events(ctx, id, after, 64)
		if err != nil {
			return 0, err
		}
		if len(evs) == 0 {
			return next, nil
		}
		after = evs[len(evs)-1].Seq
		next = after + 1
	}
}

// Redriven reports whether the run is a background run taken over from
// another host (or a previous process), driven again from its recorded
// request.
func (h *Handle) Redriven() bool { return h.redriven }

// Drive is the run's drive: 1 for its first, one more at each takeover
// (0 without leases).
func (h *Handle) Drive() int64 { return h.lease }

// HandOff releases the leases of the background runs in flight here, so
// that other hosts take them over at once, and stops them without a
// terminal write: a host shutting down hands its background runs to the
// fleet. It returns how many it handed off. Without leases it does
// nothing.
func (s *Service) HandOff(ctx context.Context) int {
	if s.lease == nil {
		return 0
	}
	// Renewals go on: the foreground runs finishing within the grace
	// keep their leases. Takeovers stop with Drain.
	s.mu.Lock()
	var hs []*Handle
	var held []Lease
	for id, h := range s.runs {
		if h.background && h.lease != 0 && !h.leaseLost.Load() {
			hs = append(hs, h)
			held = append(held, Lease{RunID: id, Token: h.lease})
		}
	}
	s.mu.Unlock()
	if len(hs) == 0 {
		return 0
	}
	// Stop them first: from here on they write nothing, so the host that
	// takes one over is its only writer.
	for _, h := range hs {
		h.handedOff.Store(true)
		h.loseLease()
	}
	if err := s.lease.store.ReleaseLeases(ctx, held); err != nil {
		s.log.Warn("runner: cannot release leases; their runs are taken over when the leases run out", "count", len(held), "err", err)
	}
	s.log.Info("runner: handed background runs to the fleet", "count", len(held))
	return len(held)
}
