// Package filtertest helps test one stage alone, without a server: it
// builds an exchange over a recording ResponseWriter (Exchange), stubs the
// next stage with a recorder (Next), renders a chain's error as the edge
// does (Serve), fakes a mapping plugin that counts its calls (Mapper),
// scripts the agent of a real run service on a real SQLite file (Agent,
// NewRuns), and splits an SSE body into its frames (SSE).
package filtertest

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
)

// Exchange returns an exchange for endpoint with body and headers (name,
// value pairs), and the recorder its reply writes to.
func Exchange(ep filters.Endpoint, body string, headers ...string) (*filters.Exchange, *httptest.ResponseRecorder) {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader([]byte(body)))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	return &filters.Exchange{Endpoint: ep, Request: req, Body: []byte(body), Reply: filters.NewReply(rec, ep)}, rec
}

// Next records whether the chain reached it and with which exchange.
type Next struct {
	Called   bool
	Exchange *filters.Exchange
	Err      error // returned when called
}

// Handle implements filters.Handler.
func (n *Next) Handle(_ context.Context, x *filters.Exchange) error {
	n.Called = true
	n.Exchange = x
	return n.Err
}

// Serve runs h on x and renders its error as the edge does (apierr.From,
// filters.Reply.Error): a JSON body while nothing is written, an SSE error
// event once a stream has started, nothing for a client that went away. It
// returns h's error.
func Serve(ctx context.Context, h filters.Handler, x *filters.Exchange) error {
	err := h.Handle(ctx, x)
	var gone *filters.ClientGoneError
	if err != nil && !errors.As(err, &gone) {
		x.Reply.Error(apierr.From(err))
	}
	return err
}
