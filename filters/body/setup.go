package body

// Setup builds the stage from its configuration: the request bodies of the
// chains, admitted by gate (the host's one Gate, kept across reloads:
// NewGate(c.MaxBytesInFlight, c.BytesInFlightWait.Std()), then Set on each
// reload). The host's other bodies (an admin upload, a GET's small body)
// use New with their own bound.
func Setup(c Config, gate *Gate) *Body {
	return New(c.MaxBodyBytes, c.ReadBodyTimeout.Std()).Admitting(gate)
}
