package run

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/runner"
)

func TestOutcomeErrorRateLimit(t *testing.T) {
	for _, c := range []struct {
		name      string
		err       error
		wantAfter int
	}{
		{"with the upstream's retry-after", fmt.Errorf("openai: %w", &runner.RateLimitError{Seconds: 12, Detail: "upstream 429"}), 12},
		{"without one", fmt.Errorf("%w: upstream 429", runner.ErrRateLimited), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var e *apierr.Error
			if !errors.As(outcomeError(c.err), &e) {
				t.Fatal("not an apierr.Error")
			}
			if e.Status != http.StatusTooManyRequests || e.Type != apierr.TypeRateLimit || e.Code != apierr.CodeRateLimited || e.RetryAfter != c.wantAfter {
				t.Fatalf("got %d %s/%s retry-after %d", e.Status, e.Type, e.Code, e.RetryAfter)
			}
			h := http.Header{}
			e.Header(h)
			if h.Get("Retry-After") != fmt.Sprint(c.wantAfter) {
				t.Fatalf("Retry-After header %q", h.Get("Retry-After"))
			}
		})
	}
}

func TestOutcomeErrorProviderAndTimeout(t *testing.T) {
	for _, c := range []struct {
		err  error
		code string
		want int
	}{
		{fmt.Errorf("%w: upstream answered 500", runner.ErrProvider), apierr.CodeProviderError, http.StatusBadGateway},
		{fmt.Errorf("%w: upstream sent nothing for 30s", runner.ErrTimeout), apierr.CodeTimeout, http.StatusGatewayTimeout},
	} {
		e := outcomeError(c.err).(*apierr.Error)
		if e.Status != c.want || e.Code != c.code || e.RetryAfter != 0 || e.Message != c.err.Error() {
			t.Fatalf("%v → %d %s retry-after %d %q", c.err, e.Status, e.Code, e.RetryAfter, e.Message)
		}
	}
}

// An unexpected error — here a store driver's, which names a file — never
// reaches the client: the message is a generic one; the error itself stays
// on the apierr.Error for the log.
func TestOutcomeErrorUnexpectedIsGeneric(t *testing.T) {
	driver := errors.New("sqlite: disk I/O error (SQLITE_IOERR) on /var/lib/runedge/runs.db")
	e := outcomeError(fmt.Errorf("record outcome: %w", driver)).(*apierr.Error)
	if e.Status != http.StatusInternalServerError || e.Code != apierr.CodeRunFailed || e.Type != apierr.TypeServer {
		t.Fatalf("got %d %s/%s", e.Status, e.Type, e.Code)
	}
	if e.Message != apierr.GenericRunFailed || !errors.Is(e, driver) {
		t.Fatalf("message %q (the cause must stay wrapped for the log: %v)", e.Message, errors.Is(e, driver))
	}
}

// An outcome the store could not record is the server's failure whatever
// the run's own outcome: a provider failure's message is for clients, but
// joined to the store's error it would carry the driver's text with it.
func TestOutcomeErrorNotRecordedIsGeneric(t *testing.T) {
	driver := errors.New("sqlite: disk I/O error on /var/lib/runedge/runs.db")
	outcome := errors.Join(fmt.Errorf("%w: upstream answered 500", runner.ErrProvider),
		fmt.Errorf("runner: %w: run run_x: %w", runner.ErrNotRecorded, driver))
	e := outcomeError(outcome).(*apierr.Error)
	if e.Status != http.StatusInternalServerError || e.Code != apierr.CodeRunFailed || e.Message != apierr.GenericRunFailed {
		t.Fatalf("got %d %s %q", e.Status, e.Code, e.Message)
	}
	if !errors.Is(e, driver) {
		t.Fatal("the store's error must stay wrapped for the log")
	}
}
