package postgres

// SetAfterRequestLookup makes f run between a recorded request's base
// lookup and its write.
func SetAfterRequestLookup(s *Store, f func()) { s.afterRequestLookup = f }
