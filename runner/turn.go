package runner

import (
	"context"

	"github.com/runedge/runedge/internal/contract"
)

// A Responses turn's context is assembled in one place, assemble, the one
// call both a run's start (Start) and a turn that must see its context
// before its run (Context: a compaction's threshold, input_tokens) make:
// the turns of previous_response_id, the earlier items its caller reads
// (StartSpec.LoadHistory: a conversation's), then the request's input,
// references resolved. The history is read under one bound
// (HistoryBounds.MaxHistoryBytes): previous_response_id and a
// conversation are never both given (the conversation stage refuses
// them together), and each reader stops at the bound.

// assemble returns what the agent of spec is given and the run of
// previous_response_id. Its caller holds an admission slot. spec.Context,
// when not nil, is the context assembled already (a compaction did):
// then the earlier turns are not read again, though previous_response_id
// still places the run and is checked.
func (s *Service) assemble(ctx context.Context, spec *StartSpec) ([]Message, string, error) {
	in, prevRun, err := s.prepare(ctx, spec, spec.Context == nil)
	if err != nil {
		return nil, "", err
	}
	if spec.Context != nil {
		return spec.Context, prevRun, nil
	}
	if spec.LoadHistory != nil {
		if spec.History, err = spec.LoadHistory(ctx); err != nil {
			return nil, "", err
		}
	}
	if len(spec.History) > 0 {
		in = append(append(make([]Message, 0, len(spec.History)+len(in)), spec.History...), in...)
	}
	return in, prevRun, nil
}

// Context assembles what a run of spec would give its agent (assemble),
// without creating a run or writing anything: a turn that must know its
// context before its run (context_management holds it against its
// threshold) reads it once, here, and hands it to the run
// (StartSpec.Context), which does not read it again. Reading the history
// costs what the history holds, so Context takes an admission slot of
// spec's tenant and token as a run does (the same in-flight limits;
// ErrUnavailable, ErrTenantBusy, ErrTokenBusy when there is none) and
// holds it while it reads; the slot is counted in InFlight and cancelled
// by CancelAll. The caller holds the slot until it calls release (once,
// also after an error): what it does with the context (counting it) is
// work of the same size. Its other errors are Start's for the same
// request (ErrItemNotFound, ErrPreviousResponseNotFound, a *BoundError,
// …).
func (s *Service) Context(ctx context.Context, spec StartSpec) (in []Message, release func(), err error) {
	h := newHandle(ctx, s, Run{ID: NewID(contract.RunPrefix), TenantID: spec.TenantID}, false)
	h.token = spec.Token
	if err := s.admit(h); err != nil {
		h.discard()
		return nil, func() {}, err
	}
	release = func() {
		h.discard()
		s.release(h)
	}
	spec.Request.Background = false // no run: nothing to store
	spec.Context = nil
	in, _, err = s.assemble(h.ctx, &spec)
	return in, release, err
}

// Complete starts a run of spec (Start), waits for its agent and records
// its end (Handle.Finish), for a caller that needs the whole answer before
// it goes on: the compaction a turn runs before its own run
// (filters/compaction). The run is recorded like every other, its usage
// in the ledger. When no run was made, run.ID is "" and err is Start's;
// otherwise err is the recorded outcome's (nil: completed).
func (s *Service) Complete(ctx context.Context, spec StartSpec) (run Run, res Result, err error) {
	h, err := s.Start(ctx, spec)
	if err != nil {
		return Run{}, Result{}, err
	}
	for range h.Events() {
	}
	res, err = h.Wait()
	if err != nil {
		return h.Run(), Result{}, h.Finish(nil, err)
	}
	return h.Run(), res, h.Finish(&res, nil)
}
