package sqlite

import (
	"errors"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// A connection's own mutex, a no-op (connMutexOff).
//
// modernc opens every connection SQLITE_OPEN_FULLMUTEX, so SQLite enters
// and leaves the connection's recursive mutex at every bind, step, reset,
// unbind and changes count, and on Linux modernc runs SQLite's pthread
// mutexes on its emulation, where each enter and leave looks the mutex up
// in a sharded map under locks of its own: 5% of `make run`'s CPU at 32
// connections (RATIONALE.md, "A connection's mutex that guards
// nothing"). That mutex guards nothing here. database/sql hands a
// connection to one goroutine at a time (and closes a result set or a
// statement only under that connection's lock), the writer's connection
// is used under wtx.mu, and modernc's own state of a connection (the TLS
// every call into SQLite runs on) may not be used by two goroutines at
// once anyway: its documentation says concurrent use corrupts memory
// before SQLite's mutex is reached. sqlite3_interrupt, the one call
// modernc makes from another goroutine, takes no mutex.
//
// So SQLite's mutex methods are wrapped before it is first initialized:
// a recursive mutex allocated after initialization, which only
// openDatabase's db->mutex is in this build (the other, the
// initialization's own pInitMutex, is allocated and freed by the first
// initialization, made before the switch; RBU's VFS is not used), is a
// static mark whose enter and leave return at once. Every other mutex
// (the static ones, the unix VFS's per-file and shared-memory mutexes,
// the page cache's) is the pthread one as before, since those are shared
// between connections and goroutines.
//
// The wrapping can only be installed while SQLite is not initialized (a
// connection opened first keeps its real mutex, which is correct, only
// slower): the package's init does it, before any connection of this
// process can be opened through this package.

var (
	// pthreadMutex is SQLite's default mutex implementation, which the
	// wrapper delegates to.
	pthreadMutex sqlite3.Sqlite3_mutex_methods
	// connMutexMark is the address every connection's mutex is: never
	// dereferenced, only told apart from the real ones.
	connMutexMark  byte
	connMutexOff   atomic.Bool
	connMutexes    atomic.Int64 // connection mutexes handed out as the mark
	connMutexError error        // why the wrapping was not installed
)

func init() { connMutexError = installConnMutex() }

func markAddr() uintptr { return uintptr(unsafe.Pointer(&connMutexMark)) }

// installConnMutex wraps SQLite's mutex methods. The default ones are
// only filled in by the first sqlite3_initialize, and sqlite3_config
// accepts new ones only while SQLite is not initialized, so it
// initializes, reads them, shuts down (nothing is open: the first check
// refuses when anything has initialized SQLite), installs the wrapper and
// initializes again.
func installConnMutex() error {
	tls := libc.NewTLS()
	defer tls.Close()
	va := libc.Xmalloc(tls, 8)
	if va == 0 {
		return errors.New("runner/store/sqlite: no memory for sqlite3_config")
	}
	defer libc.Xfree(tls, va)
	var probe sqlite3.Sqlite3_mutex_methods
	if rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_GETMUTEX, libc.VaList(va, uintptr(unsafe.Pointer(&probe)))); rc != sqlite3.SQLITE_OK {
		return errors.New("runner/store/sqlite: SQLite was initialized before this package: connections keep their mutex")
	}
	if rc := sqlite3.Xsqlite3_initialize(tls); rc != sqlite3.SQLITE_OK {
		return errors.New("runner/store/sqlite: sqlite3_initialize failed")
	}
	if rc := sqlite3.Xsqlite3_shutdown(tls); rc != sqlite3.SQLITE_OK {
		return errors.New("runner/store/sqlite: sqlite3_shutdown failed")
	}
	failed := func(msg string) error {
		sqlite3.Xsqlite3_initialize(tls)
		return errors.New("runner/store/sqlite: " + msg)
	}
	if rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_GETMUTEX, libc.VaList(va, uintptr(unsafe.Pointer(&pthreadMutex)))); rc != sqlite3.SQLITE_OK || pthreadMutex.FxMutexAlloc == 0 {
		return failed("cannot read SQLite's mutex methods")
	}
	wrapped := pthreadMutex
	wrapped.FxMutexAlloc = fnptr(connMutexAlloc)
	wrapped.FxMutexFree = fnptr(connMutexFree)
	wrapped.FxMutexEnter = fnptr(connMutexEnter)
	wrapped.FxMutexTry = fnptr(connMutexTry)
	wrapped.FxMutexLeave = fnptr(connMutexLeave)
	wrapped.FxMutexHeld = fnptr(connMutexHeld)
	wrapped.FxMutexNotheld = fnptr(connMutexNotheld)
	if rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_MUTEX, libc.VaList(va, uintptr(unsafe.Pointer(&wrapped)))); rc != sqlite3.SQLITE_OK {
		return failed("cannot install the connection mutex")
	}
	// The initialization's own recursive mutex is a real one.
	if rc := sqlite3.Xsqlite3_initialize(tls); rc != sqlite3.SQLITE_OK {
		return errors.New("runner/store/sqlite: sqlite3_initialize failed")
	}
	connMutexOff.Store(true)
	return nil
}

func connMutexAlloc(tls *libc.TLS, typ int32) uintptr {
	if typ == sqlite3.SQLITE_MUTEX_RECURSIVE && connMutexOff.Load() {
		connMutexes.Add(1)
		return markAddr()
	}
	return (*(*func(*libc.TLS, int32) uintptr)(unsafe.Pointer(&pthreadMutex.FxMutexAlloc)))(tls, typ)
}

func connMutexFree(tls *libc.TLS, m uintptr) {
	if m != markAddr() {
		callMutex(pthreadMutex.FxMutexFree, tls, m)
	}
}

func connMutexEnter(tls *libc.TLS, m uintptr) {
	if m != markAddr() {
		callMutex(pthreadMutex.FxMutexEnter, tls, m)
	}
}

func connMutexLeave(tls *libc.TLS, m uintptr) {
	if m != markAddr() {
		callMutex(pthreadMutex.FxMutexLeave, tls, m)
	}
}

func connMutexTry(tls *libc.TLS, m uintptr) int32 {
	if m == markAddr() {
		return sqlite3.SQLITE_OK
	}
	return callMutexInt(pthreadMutex.FxMutexTry, tls, m)
}

// connMutexHeld and connMutexNotheld serve SQLite's assertions, which
// this build (NDEBUG) does not compile; the mark is held by whoever asks.
func connMutexHeld(tls *libc.TLS, m uintptr) int32 {
	if m == markAddr() {
		return 1
	}
	return callMutexInt(pthreadMutex.FxMutexHeld, tls, m)
}

func connMutexNotheld(tls *libc.TLS, m uintptr) int32 {
	if m == markAddr() {
		return 1
	}
	return callMutexInt(pthreadMutex.FxMutexNotheld, tls, m)
}

func callMutex(fp uintptr, tls *libc.TLS, m uintptr) {
	(*(*func(*libc.TLS, uintptr))(unsafe.Pointer(&fp)))(tls, m)
}

func callMutexInt(fp uintptr, tls *libc.TLS, m uintptr) int32 {
	if fp == 0 {
		return 1
	}
	return (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&fp)))(tls, m)
}
