package postgres

import "github.com/jackc/pgx/v5"

// SetAfterRequestLookup makes f run between a recorded request's base
// lookup and its write, told whether the base came from the store's
// memory of recent bases rather than the database.
func SetAfterRequestLookup(s *Store, f func(cached bool)) { s.afterRequestLookup = f }

// TransitionSQL is a run's transition as the store sends it, with
// outputRef or without.
func TransitionSQL(outputRef bool) string { return transitionSQL(outputRef) }

// SetAfterEmptyLocks makes f run inside PurgeBefore's and
// DeleteResponse's transactions once they took their first locks, told
// the transaction's server process id.
func SetAfterEmptyLocks(s *Store, f func(pid uint32)) {
	s.afterEmptyLocks = func(tx pgx.Tx) { f(tx.Conn().PgConn().PID()) }
}
