package server

import (
	"context"
	"errors"
	"log/slog"

	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
)

// fail renders the error of an exchange, once: a JSON body while nothing is
// written, an SSE error event once the stream has started.
func (s *Server) fail(x *filters.Exchange, err error) {
	if e := s.failure(x, err); e != nil {
		x.Reply.Error(e)
	}
}

// failure is the client's error for err, nil when the client went away.
// Server faults are logged with their cause, which the client never sees.
func (s *Server) failure(x *filters.Exchange, err error) *apierr.Error {
	var gone *filters.ClientGoneError
	if errors.As(err, &gone) || (errors.Is(err, context.Canceled) && x.Request.Context().Err() != nil) {
		s.log.Debug("client went away", "path", x.Request.URL.Path, "err", err)
		return nil
	}
	e := apierr.From(err)
	level := slog.LevelDebug
	if e.Status >= 500 {
		level = slog.LevelError
	}
	runID := x.Reply.Header().Get(filters.HeaderRunID)
	s.log.Log(x.Request.Context(), level, "request failed", "path", x.Request.URL.Path,
		"status", e.Status, "code", e.Code, "err", err, "run_id", runID)
	if e.Status >= 500 && runID != "" {
		// The client gets the run id to quote; the detail is in the log
		// line above, under the same id.
		c := *e
		c.Message += " (run " + runID + ")"
		e = &c
	}
	return e
}
