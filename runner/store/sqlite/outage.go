package sqlite

import (
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/runedge/runedge/runner"
	"github.com/runedge/runedge/runner/store/internal/groupcommit"
)

// outage marks *err as runner.ErrUnavailable when SQLite could not use its
// file at all — locked by another process past busy_timeout, an I/O
// error, a full disk, a file it cannot open or write, no memory, a write
// batch that did not commit in time — or the
// store is closed: the client gets 503 unavailable and may retry, on
// every endpoint. An error about the statement itself (a constraint, a
// trigger's refusal) is not an outage. Every exported method defers it.
func outage(err *error) {
	if *err == nil || errors.Is(*err, runner.ErrUnavailable) {
		return
	}
	var se *sqlite.Error
	var ee *execError // the writer's raw statements' (rawexec.go)
	if errors.Is(*err, groupcommit.ErrClosed) || errors.Is(*err, groupcommit.ErrStalled) ||
		errors.As(*err, &se) && outageCode(se.Code()) || errors.As(*err, &ee) && outageCode(ee.Code()) {
		*err = fmt.Errorf("%w: runner/store/sqlite: %w", runner.ErrUnavailable, *err)
	}
}

// outageCode reports the result codes (primary, or extended) that say
// the file cannot be used now, rather than that the statement is wrong.
func outageCode(code int) bool {
	switch code & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_READONLY,
		sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PROTOCOL:
		return true
	}
	return false
}
