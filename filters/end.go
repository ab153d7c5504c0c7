package filters

import (
	"sync"
	"sync/atomic"

	"github.com/runedge/runedge/runner"
)

// End is the end of one run, owned by the run stage and handed to the
// stages after it on the exchange (Exchange.End). It is the one place that
// decides two things a run's end needs decided once: that its outcome is
// recorded exactly once (Finish), and whether the request's goroutine or a
// background goroutine of a later stage does it (Detach).
//
// It lives here, not in runner.Handle, because what it records is the
// client's answer as well as the outcome: the run stage's finishing
// function maps runner outcomes to client errors (filters/run), which the
// runner must not know; and not in the run stage, because stages never
// import each other. It replaces three exchange fields that the run and
// translate stages and the edge wrote each other's way (a finishing func,
// a detached flag and a generation hold).
type End struct {
	finish func(res *runner.Result, err error) error
	hold   func() (release func())

	once     sync.Once
	done     atomic.Bool // read by Close once the chain has returned
	err      error       // what the first Finish returned; later calls repeat it
	detached bool        // set and read on the request's goroutine only
}

// NewEnd is the end of a run whose outcome finish records (res and err as
// for runner.Handle.Finish) and maps to the client's error. hold, when not
// nil, keeps what the request uses (its configuration generation: chains
// and plugins) alive for a detached run until the returned func is called.
func NewEnd(finish func(res *runner.Result, err error) error, hold func() (release func())) *End {
	return &End{finish: finish, hold: hold}
}

// Finish records the run's outcome and returns the error to render: nil
// when the run completed, else the client's error, already mapped (an
// *apierr.Error, or the *ClientGoneError that ended it). A stage calls it
// when it must record the end before its reply's last byte; a detached
// run's goroutine calls it when the run is done. Only the first call
// records; later ones return what it returned. Safe for concurrent use.
func (e *End) Finish(res *runner.Result, err error) error {
	e.once.Do(func() {
		e.err = e.finish(res, err)
		e.done.Store(true)
	})
	return e.err
}

// Detach hands the run's end to a goroutine that outlives the request (a
// background response): the request no longer finishes the run, that
// goroutine must call Finish and then release, which lets go of what the
// request held (its generation). Call it on the request's goroutine,
// before the chain returns, at most once.
func (e *End) Detach() (release func()) {
	e.detached = true
	if e.hold == nil {
		return func() {}
	}
	return e.hold()
}

// Detached says whether the run's end was handed to a background
// goroutine (Detach): the run may still be going when the request is
// done. False for a nil End (a request that made no run).
func (e *End) Detached() bool { return e != nil && e.detached }

// Close is the run stage's last word, once the chain after it returned
// err: a detached run is left to its goroutine and err returned as is; a
// run a later stage finished returns err as is (what that stage met after
// the record, the client gone, or Finish's own answer); otherwise the run
// is finished now with err and Finish's answer returned.
func (e *End) Close(err error) error {
	if e.detached || e.done.Load() {
		return err
	}
	return e.Finish(nil, err)
}
