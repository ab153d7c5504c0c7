//go:build linux

package sqlite

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The writer's WAL in one write per commit (walVFS).
//
// SQLite appends a commit to its WAL as frames, and writes each frame
// with two system calls: its 24-byte header, then its page. A run's start
// is three frames and its end two, so at one connection a request paid
// ten pwrite64 for its two commits, each several µs on a virtual machine,
// and a batch of twenty runs some twenty. This VFS is the unix one with
// the WAL file's writes gathered: frames written one after the other are
// kept in a buffer and written in one pwrite64 when the frame that
// commits the transaction is complete (its header names the database's
// size), before SQLite publishes the commit in the WAL index, so no
// reader and no crash sees anything a plain write would not have put in
// the file by then. Every other operation on the WAL (a read, a sync, a
// truncate, its size, a file control, its close) and every write that
// does not follow the last one first writes out what is kept. Nothing
// else changes but the syncs (dbSync): the database file, the
// shared-memory index and the locks are the unix VFS's own.
//
// The writer connection opens its file through it (store.go), since only
// the writer appends frames; the checkpointer too (checkpoint.go), for
// the syncs: the database file's and the WAL's xSync give up the
// goroutine's P for the call (dbSync).

// walVFSName names the VFS for the writer's DSN ("vfs" parameter).
const walVFSName = "runedge-walgather"

// walBufSize is what a WAL file keeps before writing: the most the unix
// VFS writes in one call (its seekAndWriteFd masks a length with 0x1ffff;
// more is a short write, reported as a full disk), 31 frames of 4 KiB
// pages. A commit of more is written in several calls, and a single write
// larger than it goes straight through.
const walBufSize = 0x1ffff

// walFrameHeader is the size of a WAL frame's header (WAL_FRAME_HDRSIZE).
const walFrameHeader = 24

var (
	walVFSOnce sync.Once
	walVFSErr  error
	// unixVFS is the unix VFS (sqlite3_vfs*), whose xOpen the wrapper
	// calls; unixSz its szOsFile, where the wrapper's state begins.
	unixVFS, unixOpen uintptr
	unixSz            uintptr
	// wrapped maps a unix io-methods table to its copies (wrappedMethods);
	// all live for the process. Under wrappedMu.
	wrappedMu sync.Mutex
	wrapped   = map[wrapKey]uintptr{}
	// walWrites counts the writes that reached the unix VFS for WAL
	// files opened through walVFS (the tests' figure).
	walWrites atomic.Int64
	// blockingSyncs counts the fsyncs made through fsyncBlocking (the
	// tests' figure).
	blockingSyncs atomic.Int64
)

// walFile is a WAL file's state, kept in C memory right after the unix
// VFS's own file structure (szOsFile is enlarged for it).
type walFile struct {
	orig   uintptr // the unix io-methods table
	buf    uintptr // walBufSize bytes of C memory, or 0
	off    int64   // the file offset of buf's first byte
	n      int64   // bytes kept in buf
	commit int32   // the last header written was a commit frame's
	wal    int32   // this file is a WAL (else its methods are the unix ones)
}

// registerWALVFS registers walVFSName once per process.
func registerWALVFS() error {
	walVFSOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		unixVFS = sqlite3.Xsqlite3_vfs_find(tls, 0)
		if unixVFS == 0 {
			walVFSErr = errNoUnixVFS
			return
		}
		u := (*sqlite3.Tsqlite3_vfs)(at(unixVFS))
		unixOpen = u.FxOpen
		unixSz = (uintptr(u.FszOsFile) + 7) &^ 7
		p := libc.Xcalloc(tls, 1, uint64(unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})))
		name, err := libc.CString(walVFSName)
		if p == 0 || err != nil {
			walVFSErr = errNoUnixVFS
			return
		}
		v := (*sqlite3.Tsqlite3_vfs)(at(p))
		*v = *u
		v.FpNext = 0
		v.FzName = name
		v.FszOsFile = int32(unixSz + unsafe.Sizeof(walFile{}))
		v.FxOpen = fnptr(walOpen)
		if rc := sqlite3.Xsqlite3_vfs_register(tls, p, 0); rc != sqlite3.SQLITE_OK {
			walVFSErr = errNoUnixVFS
		}
	})
	return walVFSErr
}

type vfsError string

func (e vfsError) Error() string { return string(e) }

const errNoUnixVFS = vfsError("runner/store/sqlite: cannot register the WAL-gathering VFS")

// walOpen is xOpen: the unix VFS's, then a WAL file gets the gathering
// methods.
func walOpen(tls *libc.TLS, _ uintptr, zName uintptr, f uintptr, flags int32, pOutFlags uintptr) int32 {
	s := state(f)
	*s = walFile{}
	rc := callOpen(unixOpen, tls, unixVFS, zName, f, flags, pOutFlags)
	if rc != sqlite3.SQLITE_OK || flags&(sqlite3.SQLITE_OPEN_WAL|sqlite3.SQLITE_OPEN_MAIN_DB) == 0 {
		return rc
	}
	file := (*sqlite3.Tsqlite3_file)(at(f))
	if file.FpMethods == 0 {
		return rc
	}
	s.orig = file.FpMethods
	if flags&sqlite3.SQLITE_OPEN_WAL == 0 {
		// The database file: the unix VFS's methods but its sync.
		file.FpMethods = wrappedMethods(s.orig, false)
		return rc
	}
	s.wal = 1
	file.FpMethods = wrappedMethods(s.orig, true)
	return rc
}

// wrapKey names a copy of a unix io-methods table: the WAL's (wal) or
// the database file's.
type wrapKey struct {
	orig uintptr
	wal  bool
}

// wrappedMethods returns orig's copy with the WAL's methods replaced
// (wal), or only its sync.
func wrappedMethods(orig uintptr, wal bool) uintptr {
	wrappedMu.Lock()
	defer wrappedMu.Unlock()
	k := wrapKey{orig, wal}
	if w, ok := wrapped[k]; ok {
		return w
	}
	tls := libc.NewTLS()
	defer tls.Close()
	w := libc.Xcalloc(tls, 1, uint64(unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})))
	if w == 0 {
		return orig
	}
	m := (*sqlite3.Tsqlite3_io_methods)(at(w))
	*m = *(*sqlite3.Tsqlite3_io_methods)(at(orig))
	m.FxSync = fnptr(dbSync)
	if wal {
		m.FxClose = fnptr(walClose)
		m.FxRead = fnptr(walRead)
		m.FxWrite = fnptr(walWrite)
		m.FxTruncate = fnptr(walTruncate)
		m.FxSync = fnptr(walSync)
		m.FxFileSize = fnptr(walFileSize)
		m.FxFileControl = fnptr(walFileControl)
	}
	wrapped[k] = w
	return w
}

func walWrite(tls *libc.TLS, f, p uintptr, amt int32, off int64) int32 {
	s := state(f)
	if s.n > 0 && off != s.off+s.n {
		if rc := s.flush(tls, f); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if off == 0 || int64(amt) > walBufSize {
		// The log's header (a new log), or more than the buffer holds.
		if rc := s.flush(tls, f); rc != sqlite3.SQLITE_OK {
			return rc
		}
		walWrites.Add(1)
		return callWrite((*sqlite3.Tsqlite3_io_methods)(at(s.orig)).FxWrite, tls, f, p, amt, off)
	}
	if s.n+int64(amt) > walBufSize {
		if rc := s.flush(tls, f); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if s.buf == 0 {
		if s.buf = libc.Xmalloc(tls, walBufSize); s.buf == 0 {
			return sqlite3.SQLITE_IOERR_NOMEM
		}
	}
	if s.n == 0 {
		s.off = off
	}
	copy(unsafe.Slice((*byte)(at(s.buf+uintptr(s.n))), amt), unsafe.Slice((*byte)(at(p)), amt))
	s.n += int64(amt)
	if amt == walFrameHeader {
		// Bytes 4–7 of a frame's header: the database's size in pages
		// after a commit, zero in every other frame.
		h := unsafe.Slice((*byte)(at(p)), walFrameHeader)
		s.commit = int32(h[4] | h[5] | h[6] | h[7])
		return sqlite3.SQLITE_OK
	}
	if s.commit != 0 {
		// The commit frame's page: the transaction's frames go out now,
		// before SQLite makes them visible in the WAL index.
		s.commit = 0
		return s.flush(tls, f)
	}
	return sqlite3.SQLITE_OK
}

// flush writes what s keeps.
func (s *walFile) flush(tls *libc.TLS, f uintptr) int32 {
	if s.n == 0 {
		return sqlite3.SQLITE_OK
	}
	n := s.n
	s.n = 0
	walWrites.Add(1)
	return callWrite((*sqlite3.Tsqlite3_io_methods)(at(s.orig)).FxWrite, tls, f, s.buf, int32(n), s.off)
}

func walClose(tls *libc.TLS, f uintptr) int32 {
	s := state(f)
	rc := s.flush(tls, f)
	if s.buf != 0 {
		libc.Xfree(tls, s.buf)
		s.buf = 0
	}
	if crc := callClose((*sqlite3.Tsqlite3_io_methods)(at(s.orig)).FxClose, tls, f); rc == sqlite3.SQLITE_OK {
		rc = crc
	}
	return rc
}

func walRead(tls *libc.TLS, f, p uintptr, amt int32, off int64) int32 {
	s := state(f)
	if rc := s.flush(tls, f); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callRead((*sqlite3.Tsqlite3_io_methods)(at(s.orig)).FxRead, tls, f, p, amt, off)
}

func walTruncate(tls *libc.TLS, f uintptr, size int64) int32 {
	s := state(f)
	if rc := s.flush(tls, f); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callTruncate((*sqlite3.Tsqlite3_io_methods)(at(s.orig)).FxTruncate, tls, f, size)
}

func walSync(tls *libc.TLS, f uintptr, flags int32) int32 {
	s := state(f)
	if rc := s.flush(tls, f); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return dbSync(tls, f, flags)
}

// dbSync is the unix VFS's xSync (unixSync) with its fsync made through
// fsyncBlocking, which gives the goroutine's P to another thread for the
// call (blocksync_linux.go): the checkpointer's syncs then stop every
// other goroutine of a one-P host for the few µs of the hand-off, not the
// 10–20 ms the runtime's monitor took to notice them. unixSync's fsync on
// Linux is a plain fsync(2) of the file's descriptor whatever the flags;
// the one-time sync of the directory of a file just created (its
// UNIXFILE_DIRSYNC flag) is left to unixSync itself.
func dbSync(tls *libc.TLS, f uintptr, flags int32) int32 {
	s := state(f)
	u := (*sqlite3.TunixFile)(at(f))
	if u.FctrlFlags&sqlite3.UNIXFILE_DIRSYNC != 0 {
		return callSync((*sqlite3.Tsqlite3_io_methods)(at(s.orig)).FxSync, tls, f, flags)
	}
	blockingSyncs.Add(1)
	if e := fsyncBlocking(u.Fh); e != 0 {
		// As unixSync: the error is the file's last, and the sync failed
		// (a second fsync could succeed with the pages lost).
		u.FlastErrno = int32(e)
		return sqlite3.SQLITE_IOERR_FSYNC
	}
	return sqlite3.SQLITE_OK
}

func walFileSize(tls *libc.TLS, f, pSize uintptr) int32 {
	s := state(f)
	if rc := s.flush(tls, f); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callFileSize((*sqlite3.Tsqlite3_io_methods)(at(s.orig)).FxFileSize, tls, f, pSize)
}

func walFileControl(tls *libc.TLS, f uintptr, op int32, pArg uintptr) int32 {
	s := state(f)
	if rc := s.flush(tls, f); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return callFileControl((*sqlite3.Tsqlite3_io_methods)(at(s.orig)).FxFileControl, tls, f, op, pArg)
}

// state is f's walFile, after the unix VFS's structure.
func state(f uintptr) *walFile { return (*walFile)(at(f + unixSz)) }

// at is C memory's address p as a pointer. The memory is libc's, never
// the Go heap's, so the collector neither moves nor frees it.
func at(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// fnptr is f as a C function pointer in modernc's convention: the
// address of its func value, which for a top-level function is static.
func fnptr[F any](f F) uintptr { return *(*uintptr)(unsafe.Pointer(&f)) }

// The calls through the unix VFS's function pointers, in modernc's
// convention (a function pointer is the address of a func value).

func callOpen(fp uintptr, tls *libc.TLS, vfs, name, f uintptr, flags int32, out uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&fp)))(tls, vfs, name, f, flags, out)
}

func callWrite(fp uintptr, tls *libc.TLS, f, p uintptr, amt int32, off int64) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&fp)))(tls, f, p, amt, off)
}

func callRead(fp uintptr, tls *libc.TLS, f, p uintptr, amt int32, off int64) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&fp)))(tls, f, p, amt, off)
}

func callClose(fp uintptr, tls *libc.TLS, f uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&fp)))(tls, f)
}

func callTruncate(fp uintptr, tls *libc.TLS, f uintptr, size int64) int32 {
	return (*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&fp)))(tls, f, size)
}

func callSync(fp uintptr, tls *libc.TLS, f uintptr, flags int32) int32 {
	return (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&fp)))(tls, f, flags)
}

func callFileSize(fp uintptr, tls *libc.TLS, f, p uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&fp)))(tls, f, p)
}

func callFileControl(fp uintptr, tls *libc.TLS, f uintptr, op int32, p uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&fp)))(tls, f, op, p)
}

// walVFS is the VFS the writer opens its file through: walVFSName, or ""
// (the default) when it cannot be registered.
func walVFS() string {
	if registerWALVFS() != nil {
		return ""
	}
	return walVFSName
}
