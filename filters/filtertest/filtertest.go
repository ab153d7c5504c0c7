// Package filtertest helps test one stage alone: it builds an exchange over
// a recording ResponseWriter and stubs the next stage with a recorder.
package filtertest

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"

	"github.com/runedge/runedge/filters"
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
