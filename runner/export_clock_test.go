package runner

import "time"

// HandleBegun and HandleDeadline give the clock tests (runner_test) a
// handle's start and its context's deadline.
func HandleBegun(h *Handle) time.Time { return h.begun }

func HandleDeadline(h *Handle) (time.Time, bool) { return h.ctx.Deadline() }
