package runner

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/trace"

	"github.com/runedge/runedge/internal/contract"
	"github.com/runedge/runedge/runner/schema"
)

// StartSpec describes a run to start.
type StartSpec struct {
	Endpoint, Model, TenantID string
	Actor                     Actor
	// Token names the credential the run was asked for with (the
	// configured token's name): runs in flight are bounded per token too
	// (ServiceConfig.MaxInFlightPerToken). It is not recorded.
	Token string
	// SessionID and ThreadID continue an existing session/thread of the
	// tenant. Unknown or other-tenant ids are ErrNotFound; a thread without
	// a session continues the thread's session; both given must match. A
	// session alone gets a new thread; neither gets a new session and thread.
	SessionID, ThreadID string
	// SessionNamed says the client named SessionID (a header, or a
	// conversation): it may be a conversation's session that has no run
	// yet, which the run then opens (freshConversation). A session taken
	// from previous_response_id has runs and is not looked up.
	SessionNamed bool
	// History is given to the agent before the request's input and is not
	// stored as the response's input: a conversation's earlier items
	// (filters/conversation), already kept in the conversation.
	History []Message
	// LoadHistory, when set, gives History instead: it reads what it
	// gives (a conversation's items) and is called after admission, inside
	// the run's slot, and not at all when Context is set.
	LoadHistory func(ctx context.Context) ([]Message, error)
	// Context, when not nil, is what the agent is given in place of the
	// history and the resolved input: a compacted context
	// (filters/compaction). The request is still recorded, and continues
	// its previous response, as sent.
	Context []Message
	// RequestID and CorrelationID are the app server's ids, recorded as given.
	RequestID, CorrelationID string
	Request                  Request
	// Echo is the request mapping's echo of a responses request, kept with
	// a stored response to rebuild its Response object (ResponseRecord).
	Echo []byte
}

// Start admits, records and starts a run. The run row exists (status
// running) before the agent starts. The run's context derives from ctx, so
// when the client goes away the agent and its provider call stop too.
//
// Errors: ErrInvalidRequest (the output schema does not compile; no run is
// created), ErrInvalidSchema (it is beyond schema.Check's bounds or admits
// no value; no run is created either), ErrUnavailable (draining or at MaxInFlight), ErrNotFound (a
// session or thread the tenant cannot see).
//
// The caller owns the returned Handle and must call Finish, which records
// the outcome and releases the run.
func (s *Service) Start(ctx context.Context, spec StartSpec) (*Handle, error) {
	if len(spec.Request.OutputSchema) > 0 {
		if _, err := schema.CheckContext(ctx, spec.Request.OutputSchema); err != nil {
			if ctx.Err() != nil { // the request ended: no refusal to give
				return nil, context.Cause(ctx)
			}
			kind := ErrInvalidRequest
			if errors.Is(err, schema.ErrBounds) {
				kind = ErrInvalidSchema
			}
			return nil, fmt.Errorf("%w: output_schema: %v", kind, err)
		}
	}
	if err := checkTools(ctx, spec.Request.Tools); err != nil {
		return nil, err
	}
	// A background run belongs to no request: the client may go away
	// and the run goes on, until it ends, is cancelled or the host
	// shuts down.
	if spec.Request.Background {
		ctx = context.WithoutCancel(ctx)
	}
	now := s.now().Unix()
	started := now
	run := Run{
		ID:            NewID(contract.RunPrefix),
		Object:        "run",
		Status:        StatusRunning,
		Actor:         spec.Actor,
		TenantID:      spec.TenantID,
		Endpoint:      spec.Endpoint,
		Model:         spec.Model,
		RequestID:     spec.RequestID,
		CorrelationID: spec.CorrelationID,
		HostID:        s.host,
		TraceID:       traceID(ctx),
		CreatedAt:     now,
		StartedAt:     &started,
	}
	s.leaseOf(&run)
	h := newHandle(ctx, s, run, spec.Request.Stream)
	h.lease = run.LeaseToken
	h.stored = !spec.Request.NoStore && s.history != nil && spec.Endpoint == contract.EndpointResponses
	h.noStore, h.background, h.token = spec.Request.NoStore, spec.Request.Background, spec.Token
	// A native run's events are its history's, streamed or not: the
	// native events API replays them (host/api nativerun.go).
	h.logged = s.history != nil && spec.Endpoint == contract.EndpointNative
	// A pending text (Message.SetContentPending) goes as its literal to
	// an agent that reads texts through Message.Text or the literal, and
	// into the recorded request; any other agent, stored items and the
	// texts a run lists are given the texts decoded.
	if h.stored || h.logged || spec.Endpoint == contract.EndpointCompact || !takesPendingTexts(s.agent) {
		DecodeTexts(spec.Request.Input)
		DecodeTexts(spec.Context)
	}
	// Admit before any store work, so the in-flight limits hold under
	// concurrent Starts, CancelAll reaches a run that is still being set
	// up, and no work proportional to the stored history (previous
	// responses, item references) is done for a request that has no slot.
	if err := s.admit(h); err != nil {
		h.discard()
		return nil, err
	}
	agentReq, prevRun, err := s.setUp(ctx, h, &spec)
	if err != nil {
		h.discard()
		s.release(h)
		return nil, err
	}
	// Budgets (quota.go): the estimate counts the run's whole input, so it
	// is reserved once that is known, and before anything is written: a
	// run over budget gives its slot back and leaves no run.
	h.meterAt = s.meter()
	if h.meterAt.Quota != nil {
		if err := h.reserve(ctx, h.meterAt, agentReq); err != nil {
			h.discard()
			s.release(h)
			return nil, err
		}
	}
	// A stored response's record and input items join the run's start
	// write when the store can (HistoryJoiner): one commit, both or neither.
	rctx, begun := ctx, NotJoined
	var rec ResponseRecord
	var input []Item
	if h.stored {
		rec = ResponseRecord{RunID: h.run.ID, TenantID: h.run.TenantID, PreviousRunID: prevRun,
			Background: spec.Request.Background, Echo: spec.Echo}
		input = inputItems(h.run.ID, spec.Request.Input)
		rctx, begun = s.joinBegin(ctx, rec, input)
	}
	// The agent does what reads the input before the start commits
	// (PreparingAgent): a run waiting for its start then holds what that
	// made (an upstream request that points at the client's texts), not
	// the input too, and neither does this frame. A run its owner runs
	// inline (an in-process provider) is not prepared.
	inline := false
	if ia, ok := s.agent.(InlineAgent); ok && !spec.Request.Stream && !spec.Request.Background && !h.logged {
		inline = ia.Inline(agentReq)
	}
	var prepared PreparedRun
	if pa, ok := s.agent.(PreparingAgent); ok && !inline {
		if prepared, ok = pa.Prepare(agentReq); ok {
			agentReq = Request{}
			spec.Request.Input, spec.History, spec.Context, spec.LoadHistory = nil, nil, nil, nil
		}
	}
	if err := s.record(rctx, h, spec); err != nil {
		h.unreserve(ctx)
		h.discard()
		s.release(h)
		return nil, err
	}
	h.leased.Store(true)
	// The request's JSON is in the store now; a run that waits on its
	// provider (for minutes, in the background) need not hold a copy, and
	// its buffer serves a later request's (recordedPool).
	putRecorded(h.run.Request)
	h.run.Request, h.run.RequestBounds = nil, nil
	if h.stored && !begun() {
		if err := s.history.BeginResponse(ctx, rec, input); err != nil {
			// The run row exists: end it as failed rather than leave it
			// running with nobody executing it.
			h.execute(failingAgent{err}, agentReq)
			return nil, errors.Join(fmt.Errorf("runner: record response: %w", err), h.Finish(nil, err))
		}
	}
	// The observer reads the run during the call and keeps a copy if
	// it keeps anything (Observer): no copy here.
	s.observer.RunStarted(&h.run)
	if inline {
		// Its owner waits for the whole answer and the agent makes no call
		// that waits: it runs when the owner first waits (Handle.inline).
		h.pending = func() { h.execute(s.agent, agentReq) }
		return h, nil
	}
	if prepared != nil {
		s.workers.run(func() { h.execute(prepared, Request{}) })
		return h, nil
	}
	s.workers.run(func() { h.execute(s.agent, agentReq) })
	return h, nil
}

// setUp resolves what run h is given, inside its admission slot: the
// request's item references and the turns of previous_response_id
// (prepare), the history of a conversation, or the context a compaction
// stage resolved already (StartSpec.Context: then the earlier turns are
// not read again). It sets the run's recorded request and returns the
// agent's request and the run of previous_response_id.
func (s *Service) setUp(ctx context.Context, h *Handle, spec *StartSpec) (Request, string, error) {
	agentInput, prevRun, err := s.assemble(ctx, spec)
	if err != nil {
		return Request{}, "", err
	}
	if err := checkToolResults(agentInput); err != nil {
		return Request{}, "", err
	}
	recorded := spec.Request
	if recorded.NoStore {
		// store:false: the run is attributed and counted, but what was
		// said is not kept.
		recorded.Input = nil
	}
	// A stored response keeps its input as its items and the request
	// without it (itemref.Elide): only other runs record their input's
	// ends for a store to share (Run.RequestBounds).
	reqJSON, bounds, err := recordedPooled(&recorded, !h.stored)
	if err != nil {
		return Request{}, "", fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	h.run.Request, h.run.RequestBounds = reqJSON, bounds
	if spec.Endpoint == contract.EndpointCompact {
		// Only a compaction lists what its agent was given; any other run
		// would hold its whole input for as long as it runs.
		h.input = agentInput
	}
	agentReq := spec.Request
	agentReq.Input = agentInput
	return agentReq, prevRun, nil
}

// record places the run in its session and thread and inserts it. Opening
// a session or thread and inserting the run are one store write (StartRun),
// committed before the agent starts: one commit instead of up to three,
// and a start that fails leaves no empty session or thread.
func (s *Service) record(ctx context.Context, h *Handle, spec StartSpec) error {
	sess, thread, newSession, newThread, err := s.place(ctx, spec, h.run.ID)
	if err != nil {
		return err
	}
	h.run.SessionID, h.run.ThreadID = sess, thread
	// The store reads the run and keeps nothing of it: no copy (448 bytes
	// a request).
	err = s.store.StartRun(ctx, &h.run, newSession, newThread)
	if newSession && errors.Is(err, ErrSessionExists) {
		// Two first runs of one conversation at once (freshConversation
		// said fresh to both): the other opened the session first. This
		// one joins it, if the session is the tenant's; the check of a
		// run in a session is StartRun's own.
		err = s.store.StartRun(ctx, &h.run, false, true)
	}
	if err != nil {
		if errors.Is(err, ErrNotFound) { // the named session is not the tenant's
			return err
		}
		return fmt.Errorf("runner: record run: %w", err)
	}
	return nil
}

// place resolves the session and thread of new run runID, and says which
// of them StartRun must check as new: a session the client named, and a
// thread opened in it. Only a continued thread is read here, because
// the run needs its session id; a continued session is not looked up
// first: creating the new thread in it checks, in the same statement, that
// it exists and is the tenant's.
//
// A session or thread the run opens takes the run's suffix
// (contract.OwnSessionID, OwnThreadID): it leads back to its first run, so
// the SQLite store finds that run by its id and writes no index entry for
// it, two B-tree pages fewer per new conversation (RATIONALE.md "A new
// session's ids are its run's").
func (s *Service) place(ctx context.Context, spec StartSpec, runID string) (session, thread string, newSession, newThread bool, err error) {
	switch {
	case spec.ThreadID != "":
		session, err = s.store.ThreadSession(ctx, spec.TenantID, spec.ThreadID)
		if err != nil {
			return "", "", false, false, err
		}
		if spec.SessionID != "" && spec.SessionID != session {
			return "", "", false, false, fmt.Errorf("%w: thread %s is not in session %s", ErrNotFound, spec.ThreadID, spec.SessionID)
		}
		return session, spec.ThreadID, false, false, nil
	case spec.SessionID != "":
		fresh := false
		if spec.SessionNamed {
			if fresh, err = s.freshConversation(ctx, spec.TenantID, spec.SessionID); err != nil {
				return "", "", false, false, err
			}
		}
		return spec.SessionID, contract.OwnThreadID(runID), fresh, true, nil
	default:
		// Both ids are the service's own, made from the run's id (the time
		// and 112 random bits): no other run can hold them, so StartRun is
		// told to check neither. Its checks are two index lookups in the
		// insert, a tenth of what the store spends on a request that opens
		// a session (RATIONALE.md "Ids the service made are not checked").
		return contract.OwnSessionID(runID), contract.OwnThreadID(runID), false, false, nil
	}
}

// traceID is the trace id of the span ctx carries (the request's, when
// the host traces), "" without one or when it is not sampled: a trace
// that is not exported leads nowhere, and an unsampled id may be one a
// client chose.
func traceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		return sc.TraceID().String()
	}
	return ""
}

// failingAgent ends a run that could not be set up.
type failingAgent struct{ err error }

func (a failingAgent) Run(context.Context, Request, func(Event) error) (Result, error) {
	return Result{}, a.err
}
