package postgres

// SetAfterRequestLookup makes f run between a recorded request's base
// lookup and its write, told whether the base came from the store's
// memory of recent bases rather than the database.
func SetAfterRequestLookup(s *Store, f func(cached bool)) { s.afterRequestLookup = f }
