package filters_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/runner"
)

// recorder is a run stage's finishing function that counts its calls and
// answers each with mapped.
type recorder struct {
	calls  atomic.Int32
	gotErr error
	mapped error
}

func (r *recorder) finish(_ *runner.Result, err error) error {
	r.calls.Add(1)
	r.gotErr = err
	return r.mapped
}

func TestEndFinishRecordsOnceUnderConcurrentCalls(t *testing.T) {
	r := &recorder{mapped: errors.New("mapped")}
	e := filters.NewEnd(r.finish, nil)
	var wg sync.WaitGroup
	got := make([]error, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = e.Finish(nil, errors.New("from a stage"))
		}()
	}
	wg.Wait()
	if n := r.calls.Load(); n != 1 {
		t.Fatalf("the finishing function ran %d times, want once", n)
	}
	for i, err := range got {
		if err != r.mapped {
			t.Errorf("call %d returned %v, want the first call's answer %v", i, err, r.mapped)
		}
	}
	if err := e.Close(nil); err != nil {
		t.Errorf("Close after Finish = %v, want the chain's error (nil) as is", err)
	}
	if n := r.calls.Load(); n != 1 {
		t.Errorf("Close after Finish recorded again (%d calls)", n)
	}
}

func TestEndCloseFinishesWhatNobodyDid(t *testing.T) {
	r := &recorder{mapped: errors.New("mapped")}
	e := filters.NewEnd(r.finish, nil)
	chainErr := errors.New("translate failed")
	if err := e.Close(chainErr); err != r.mapped {
		t.Errorf("Close = %v, want the finishing function's answer %v", err, r.mapped)
	}
	if r.calls.Load() != 1 || r.gotErr != chainErr {
		t.Errorf("finish ran %d times with %v, want once with the chain's error", r.calls.Load(), r.gotErr)
	}
}

func TestEndCloseAfterFinishReturnsTheChainsError(t *testing.T) {
	r := &recorder{}
	e := filters.NewEnd(r.finish, nil)
	if err := e.Finish(&runner.Result{}, nil); err != nil {
		t.Fatal(err)
	}
	gone := &filters.ClientGoneError{Err: errors.New("broken pipe")}
	if err := e.Close(gone); err != gone {
		t.Errorf("Close = %v, want what the stage met after the record (%v)", err, gone)
	}
}

func TestEndDetachHoldsUntilReleasedAndLeavesTheEndToItsGoroutine(t *testing.T) {
	r := &recorder{}
	var held, released atomic.Int32
	hold := func() func() {
		held.Add(1)
		return func() { released.Add(1) }
	}
	e := filters.NewEnd(r.finish, hold)
	if e.Detached() {
		t.Fatal("Detached before Detach")
	}
	release := e.Detach()
	if !e.Detached() || held.Load() != 1 || released.Load() != 0 {
		t.Fatalf("after Detach: detached %v, held %d, released %d", e.Detached(), held.Load(), released.Load())
	}
	chainErr := errors.New("client left its stream")
	if err := e.Close(chainErr); err != chainErr {
		t.Errorf("Close of a detached run = %v, want the chain's error as is", err)
	}
	if n := r.calls.Load(); n != 0 {
		t.Fatalf("Close finished a detached run (%d calls)", n)
	}
	e.Finish(nil, nil) // the background goroutine
	release()
	if r.calls.Load() != 1 || released.Load() != 1 {
		t.Errorf("finish ran %d times, released %d times, want once each", r.calls.Load(), released.Load())
	}
}

func TestEndWithoutHoldOrRun(t *testing.T) {
	var none *filters.End
	if none.Detached() {
		t.Error("a nil End (no run) reports detached")
	}
	e := filters.NewEnd((&recorder{}).finish, nil)
	e.Detach()() // nothing to hold: the release is a no-op
	if !e.Detached() {
		t.Error("Detach without a hold did not detach")
	}
}
