package runner

// DetailError is a failure told twice: Err, in runedge's words, is what
// the client reads and the run records (what happened and its status
// class: "the upstream answered 500"); Detail is what the upstream or the
// transport said (its own error text, which may quote internal addresses,
// file paths or hosts), and only the log sees it, under the run's id. A
// provider wraps every failure whose words are not its own in one, so no
// caller that prints the error can leak them.
type DetailError struct {
	Err    error
	Detail string
}

func (e *DetailError) Error() string { return e.Err.Error() }
func (e *DetailError) Unwrap() error { return e.Err }
