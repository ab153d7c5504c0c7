package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// The statements every run writes (its insert, its transitions, its
// ledger line) and the ends of the writer's transactions run straight on
// SQLite's C interface (modernc's transpiled one), on the writer
// connection's handle, not through database/sql nor modernc's driver.
// database/sql copies a statement's arguments into a new
// []driver.NamedValue on every call and converts each; modernc's driver
// then asks SQLite for every parameter's name, copies every text value
// into C memory it allocates and frees after the step, unbinds them all
// and allocates a result. Here a statement's values are bound in order,
// its text copied into one buffer of C memory the writer reuses
// (SQLITE_STATIC: SQLite reads it during the step and keeps no pointer
// after the next bind), and the rows changed read once (RATIONALE.md,
// "The writer's statements on SQLite's C interface"). The writer runs
// one statement at a time, under wtx.mu. The other writer statements
// (the response history's, rare ones) keep database/sql.

// cconn is the writer connection as SQLite's C interface sees it: its
// sqlite3* handle, the TLS the calls run on (modernc's stand-in for a C
// thread: its stack for C allocations) and the buffer text and blob
// values are bound from. Used under wtx.mu, or before the Store exists.
type cconn struct {
	db    uintptr
	tls   *libc.TLS
	buf   uintptr // C memory of cap bytes; never 0 while open
	cap   int
	stmts []*rawStmt
}

// cbufMin is the bound-value buffer's first size: a small request's
// insert binds a few hundred bytes of text. It grows to at most cbufMax;
// a statement with more to bind has a buffer of its own.
const (
	cbufMin = 4096
	cbufMax = 64 << 10
)

// openCConn finds the handle of the writer connection c: modernc's
// driver connection keeps it in its field db, read by reflection (no
// exported accessor exists); a modernc without it fails Open here, and
// TestWriterStatementsOnTheCInterface with it.
func openCConn(c *sql.Conn) (*cconn, error) {
	var db uintptr
	err := c.Raw(func(dc any) error {
		v := reflect.ValueOf(dc)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return fmt.Errorf("the driver's connection is a %T", dc)
		}
		f := v.Elem().FieldByName("db")
		if !f.IsValid() || f.Kind() != reflect.Uintptr || f.Uint() == 0 {
			return fmt.Errorf("the driver's connection %T has no SQLite handle", dc)
		}
		db = uintptr(f.Uint())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("runner/store/sqlite: %w", err)
	}
	cc := &cconn{db: db, tls: libc.NewTLS()}
	if err := cc.grow(cbufMin); err != nil {
		cc.tls.Close()
		return nil, err
	}
	return cc, nil
}

// grow makes the buffer at least n bytes. It runs between statements
// only: a statement's values are bound after the buffer is sized for
// all of them.
func (cc *cconn) grow(n int) error {
	if n <= cc.cap {
		return nil
	}
	size := max(cbufMin, cc.cap)
	for size < n {
		size *= 2
	}
	p := libc.Xmalloc(cc.tls, types.Size_t(size))
	if p == 0 {
		return errors.New("runner/store/sqlite: no memory for a statement's values")
	}
	if cc.buf != 0 {
		libc.Xfree(cc.tls, cc.buf)
	}
	cc.buf, cc.cap = p, size
	return nil
}

// close finalizes the statements prepared on the connection and frees
// the buffer; the connection itself is database/sql's to close, after.
func (cc *cconn) close() error {
	if cc.tls == nil {
		return nil // closed before
	}
	var errs []error
	for _, s := range cc.stmts {
		if rc := sqlite3.Xsqlite3_finalize(cc.tls, s.p); rc != sqlite3.SQLITE_OK {
			errs = append(errs, cc.error(rc))
		}
	}
	cc.stmts = nil
	if cc.buf != 0 {
		libc.Xfree(cc.tls, cc.buf)
		cc.buf, cc.cap = 0, 0
	}
	cc.tls.Close()
	cc.tls = nil
	return errors.Join(errs...)
}

// at is C memory's address p as a pointer. The memory is libc's, never
// the Go heap's, so the collector neither moves nor frees it.
func at(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// rawStmt is a statement prepared on the writer's connection.
type rawStmt struct {
	cc *cconn
	p  uintptr // sqlite3_stmt*
	n  int     // its parameters
}

// prepare compiles query on the connection (SQLITE_PREPARE_PERSISTENT:
// it is kept for the Store's life).
func (cc *cconn) prepare(query string) (*rawStmt, error) {
	z, err := libc.CString(query)
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(cc.tls, z)
	pp := libc.Xmalloc(cc.tls, types.Size_t(unsafe.Sizeof(uintptr(0))))
	if pp == 0 {
		return nil, errors.New("runner/store/sqlite: no memory to prepare a statement")
	}
	defer libc.Xfree(cc.tls, pp)
	if rc := sqlite3.Xsqlite3_prepare_v3(cc.tls, cc.db, z, -1, sqlite3.SQLITE_PREPARE_PERSISTENT, pp, 0); rc != sqlite3.SQLITE_OK {
		return nil, fmt.Errorf("runner/store/sqlite: prepare %.40q: %w", query, cc.error(rc))
	}
	p := *(*uintptr)(at(pp))
	if p == 0 {
		return nil, fmt.Errorf("runner/store/sqlite: prepare %.40q: no statement", query)
	}
	s := &rawStmt{cc: cc, p: p, n: int(sqlite3.Xsqlite3_bind_parameter_count(cc.tls, p))}
	cc.stmts = append(cc.stmts, s)
	return s, nil
}

// rawResult is a raw statement's result, as sql.Result's: the rows it
// inserted, updated or deleted (sqlite3_changes64) and the connection's
// last inserted rowid after it.
type rawResult struct{ changed, lastID int64 }

func (r rawResult) RowsAffected() (int64, error) { return r.changed, nil }
func (r rawResult) LastInsertId() (int64, error) { return r.lastID, nil }

// execError is an error SQLite returned for a raw statement; Code is its
// (extended) result code, as *sqlite.Error's.
type execError struct {
	code int
	msg  string
}

func (e *execError) Error() string { return e.msg }

// Code is the SQLite result code, extended (the driver turns extended
// codes on at open, and the raw statements share its connection).
func (e *execError) Code() int { return e.code }

// error is rc as an execError, with the connection's message.
func (cc *cconn) error(rc int32) error {
	msg := libc.GoString(sqlite3.Xsqlite3_errstr(cc.tls, rc))
	if ext := sqlite3.Xsqlite3_extended_errcode(cc.tls, cc.db); ext == rc || ext&0xff == rc&0xff {
		msg += ": " + libc.GoString(sqlite3.Xsqlite3_errmsg(cc.tls, cc.db))
	}
	return &execError{code: int(rc), msg: fmt.Sprintf("%s (%d)", msg, rc)}
}

// exec runs st with args inside the writer's transaction. Its caller
// holds t.mu. A context that can end interrupts the statement, as the
// driver does (the group commit's never can: NoDeadline).
func (t *wtx) exec(ctx context.Context, st *rawStmt, args ...any) (rawResult, error) {
	if done := ctx.Done(); done != nil {
		if err := ctx.Err(); err != nil {
			return rawResult{}, err
		}
		db := st.cc.db
		stop := context.AfterFunc(ctx, func() {
			tls := libc.NewTLS()
			sqlite3.Xsqlite3_interrupt(tls, db)
			tls.Close()
		})
		n, err := st.exec(args)
		if !stop() {
			return rawResult{}, ctx.Err()
		}
		return n, err
	}
	return st.exec(args)
}

// exec binds args to st's parameters in order, steps it to its end and
// resets it.
func (st *rawStmt) exec(args []any) (rawResult, error) {
	cc := st.cc
	if len(args) != st.n {
		return rawResult{}, fmt.Errorf("runner/store/sqlite: %d arguments for %d parameters", len(args), st.n)
	}
	size := 0
	for _, a := range args {
		size += copied(a)
	}
	next := cc.buf // where the next text or blob is copied
	if size > cbufMax {
		// An agent-sized request's values: a buffer of their own, freed
		// after the step, so the kept one stays small (peak RSS).
		if next = libc.Xmalloc(cc.tls, types.Size_t(size)); next == 0 {
			return rawResult{}, errors.New("runner/store/sqlite: no memory for a statement's values")
		}
		defer libc.Xfree(cc.tls, next)
	} else if size > cc.cap {
		if err := cc.grow(size); err != nil {
			return rawResult{}, err
		}
		next = cc.buf
	}
	for i, a := range args {
		if err := st.bind(int32(i+1), a, &next); err != nil {
			return rawResult{}, fmt.Errorf("argument %d: %w", i+1, err)
		}
	}
	rc := sqlite3.Xsqlite3_step(cc.tls, st.p)
	for rc == sqlite3.SQLITE_ROW {
		rc = sqlite3.Xsqlite3_step(cc.tls, st.p)
	}
	if rc != sqlite3.SQLITE_DONE {
		err := cc.error(rc)
		sqlite3.Xsqlite3_reset(cc.tls, st.p)
		return rawResult{}, err
	}
	r := rawResult{sqlite3.Xsqlite3_changes64(cc.tls, cc.db), sqlite3.Xsqlite3_last_insert_rowid(cc.tls, cc.db)}
	sqlite3.Xsqlite3_reset(cc.tls, st.p)
	return r, nil
}

// copied is how many bytes of a bind copies into C memory: a text's or
// a blob's.
func copied(a any) int {
	switch v := a.(type) {
	case string:
		return len(v)
	case []byte:
		return len(v)
	case nil, int64, int, bool, float64:
		return 0
	}
	if v, ok := converted(a); ok {
		return copied(v)
	}
	return 0
}

// converted is a named type's value (a status, a kind) as database/sql
// would convert it, when that is a value bind takes.
func converted(a any) (any, bool) {
	v, err := driver.DefaultParameterConverter.ConvertValue(a)
	if err != nil {
		return nil, false
	}
	switch v.(type) {
	case nil, int64, bool, float64, string, []byte:
		return v, true
	}
	return nil, false
}

// bind binds a as parameter i, a text or blob copied to *next (which
// it moves past the copy), as modernc's driver binds the same Go value:
// nil and a nil []byte as NULL, a bool as 0 or 1, an empty string as an
// empty text (a pointer that is not NULL, for a length of 0). time.Time
// is no such value: the store writes times as integers.
func (st *rawStmt) bind(i int32, a any, next *uintptr) error {
	cc := st.cc
	var rc int32
	switch v := a.(type) {
	case nil:
		rc = sqlite3.Xsqlite3_bind_null(cc.tls, st.p, i)
	case int64:
		rc = sqlite3.Xsqlite3_bind_int64(cc.tls, st.p, i, v)
	case int:
		rc = sqlite3.Xsqlite3_bind_int64(cc.tls, st.p, i, int64(v))
	case bool:
		b := int64(0)
		if v {
			b = 1
		}
		rc = sqlite3.Xsqlite3_bind_int64(cc.tls, st.p, i, b)
	case float64:
		rc = sqlite3.Xsqlite3_bind_double(cc.tls, st.p, i, v)
	case string:
		p := *next
		copy(unsafe.Slice((*byte)(at(p)), len(v)), v)
		*next += uintptr(len(v))
		rc = sqlite3.Xsqlite3_bind_text(cc.tls, st.p, i, p, int32(len(v)), 0)
	case []byte:
		if v == nil {
			rc = sqlite3.Xsqlite3_bind_null(cc.tls, st.p, i)
			break
		}
		p := *next
		copy(unsafe.Slice((*byte)(at(p)), len(v)), v)
		*next += uintptr(len(v))
		rc = sqlite3.Xsqlite3_bind_blob(cc.tls, st.p, i, p, int32(len(v)), 0)
	default:
		if v, ok := converted(a); ok {
			return st.bind(i, v, next)
		}
		return fmt.Errorf("runner/store/sqlite: a %T is no value a writer statement binds", a)
	}
	if rc != sqlite3.SQLITE_OK {
		return cc.error(rc)
	}
	return nil
}
