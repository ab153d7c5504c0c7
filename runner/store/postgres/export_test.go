package postgres

// SetAfterRequestLookup makes f run between a recorded request's base
// lookup and its write, told whether the base came from the store's
// memory of recent bases rather than the database.
func SetAfterRequestLookup(s *Store, f func(cached bool)) { s.afterRequestLookup = f }

// TransitionSQL is a run's transition as the store sends it, with
// outputRef or without.
func TransitionSQL(outputRef bool) string { return transitionSQL(outputRef) }
