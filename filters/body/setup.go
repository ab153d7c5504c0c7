package body

// Setup builds the stage from its configuration: the request bodies of the
// chains. The host's other bodies (an admin upload, a GET's small body)
// use New with their own bound.
func Setup(c Config) *Body { return New(c.MaxBodyBytes, c.ReadBodyTimeout.Std()) }
