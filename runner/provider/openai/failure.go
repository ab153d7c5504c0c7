package openai

import (
	"errors"
	"fmt"
	"time"

	"github.com/runedge/runedge/runner"
)

// failure is one failed attempt: the error the run records (it wraps a
// runner sentinel, so the edge maps it to the right status), whether
// another attempt could help, and how long the upstream asked us to wait.
// err is in our words only; what the upstream or the transport said goes
// in detail, which reaches the log and nothing else (runner.DetailError).
type failure struct {
	err    error
	detail string
	retry  bool
	after  time.Duration
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// final is the error of the whole call after attempts tries.
func (f *failure) final(attempts int) error {
	err := f.err
	if attempts > 1 {
		err = fmt.Errorf("%w (after %d attempts)", f.err, attempts)
	}
	if f.detail != "" {
		return &runner.DetailError{Err: err, Detail: f.detail}
	}
	return err
}

// saying adds what the upstream or the transport said, for the log.
func (f *failure) saying(format string, args ...any) *failure {
	f.detail = fmt.Sprintf(format, args...)
	return f
}

// asFailure finds the failure in err. Anything else (the consumer's emit
// error) is final as it is.
func asFailure(err error) *failure {
	var f *failure
	if errors.As(err, &f) {
		return f
	}
	return &failure{err: err}
}

// providerFailure is a failure the client sees as 502 provider_error. The
// text says what the upstream did; it never contains the API key (the
// callers that quote the upstream redact it).
func providerFailure(retry bool, format string, args ...any) *failure {
	return &failure{err: fmt.Errorf("%w: openai upstream: "+format, append([]any{runner.ErrProvider}, args...)...), retry: retry}
}

// timeoutFailure is a failure the client sees as 504 timeout. Timeouts
// are not retried: the attempt already used the time it was given.
func timeoutFailure(format string, args ...any) *failure {
	return &failure{err: fmt.Errorf("%w: openai upstream: "+format, append([]any{runner.ErrTimeout}, args...)...)}
}
