//go:build linux

package sqlite

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"
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
// does not follow the last one first writes out what is kept. The
// database file, the shared-memory index and the locks are the unix
// VFS's own; what the writer does differently with them is sync through
// dbSync, move no read mark it does not need and keep its read lock from
// one transaction to the next (walShmLock, below).
//
// The writer connection opens its file through it (store.go), since only
// the writer appends frames; the checkpointer too (checkpoint.go), for
// the syncs: the database file's and the WAL's xSync give up the
// goroutine's P for the call (dbSync).

// walVFSName names the VFS for the writer's DSN ("vfs" parameter).
const walVFSName = "runedge-walgather"

// syncVFSName names the checkpointer's VFS: its files keep the unix VFS's
// methods but their sync (dbSync), since it appends no frame and must
// not take the writer's ways with the WAL index's locks (walShmLock).
const syncVFSName = "runedge-syncs"

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
	// syncVFS is syncVFSName's registered structure, which walOpen is
	// told apart by.
	syncVFS uintptr
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
	// markSkips counts the read-mark moves the writer answered busy and
	// parkReuses the read locks it handed back (walShmLock), the tests'
	// figures.
	markSkips  atomic.Int64
	parkReuses atomic.Int64
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
	// The database file's shared-memory state (walShmLock).
	shm    uintptr // the WAL index's first region, or 0 before it is mapped
	held   uint32  // the WAL-index locks this connection holds
	round  int32   // the read mark last answered busy in this begin, or -1
	parked int32   // the read lock kept since the last transaction, or 0
	// Whether another writer shares the file (sharedFile): inode is the
	// unix VFS's inode structure this writer is counted under in writers
	// (0 before the index is mapped), shared the last answer, checked
	// when it was found (Unix ns).
	inode   uintptr
	shared  int32
	checked int64
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
		for _, n := range []string{walVFSName, syncVFSName} {
			p := libc.Xcalloc(tls, 1, uint64(unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})))
			name, err := libc.CString(n)
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
			if n == syncVFSName {
				syncVFS = p
			}
			if rc := sqlite3.Xsqlite3_vfs_register(tls, p, 0); rc != sqlite3.SQLITE_OK {
				walVFSErr = errNoUnixVFS
				return
			}
		}
	})
	return walVFSErr
}

type vfsError string

func (e vfsError) Error() string { return string(e) }

const errNoUnixVFS = vfsError("runner/store/sqlite: cannot register the WAL-gathering VFS")

// walOpen is xOpen: the unix VFS's, then a WAL file gets the gathering
// methods.
func walOpen(tls *libc.TLS, vfs uintptr, zName uintptr, f uintptr, flags int32, pOutFlags uintptr) int32 {
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
	if vfs == syncVFS {
		// The checkpointer's files (syncVFSName): the unix VFS's methods
		// but their sync; it appends no frame and keeps no lock.
		file.FpMethods = wrappedMethods(s.orig, wrapSync)
		return rc
	}
	if flags&sqlite3.SQLITE_OPEN_MAIN_DB != 0 {
		file.FpMethods = wrappedMethods(s.orig, wrapWriterDB)
		return rc
	}
	s.wal = 1
	file.FpMethods = wrappedMethods(s.orig, wrapWAL)
	return rc
}

// wrapKind says which of a unix io-methods table's methods a copy
// replaces.
type wrapKind uint8

const (
	wrapSync     wrapKind = iota // the sync only (dbSync): the checkpointer's files
	wrapWAL                      // the writer's WAL: gathering (walWrite) and its sync
	wrapWriterDB                 // the writer's database file: its sync and the WAL index's locks (walShmLock)
)

// wrapKey names a copy of a unix io-methods table.
type wrapKey struct {
	orig uintptr
	kind wrapKind
}

// wrappedMethods returns orig's copy with kind's methods replaced; orig
// itself when it is not a table the copy can stand for (no shared-memory
// methods for wrapWriterDB) or C memory runs out.
func wrappedMethods(orig uintptr, kind wrapKind) uintptr {
	wrappedMu.Lock()
	defer wrappedMu.Unlock()
	k := wrapKey{orig, kind}
	if w, ok := wrapped[k]; ok {
		return w
	}
	om := (*sqlite3.Tsqlite3_io_methods)(at(orig))
	if kind == wrapWriterDB && (om.FiVersion < 2 || om.FxShmLock == 0 || om.FxShmMap == 0 || om.FxShmUnmap == 0) {
		return orig // not the unix VFS's: left as it is
	}
	tls := libc.NewTLS()
	defer tls.Close()
	w := libc.Xcalloc(tls, 1, uint64(unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})))
	if w == 0 {
		return orig
	}
	m := (*sqlite3.Tsqlite3_io_methods)(at(w))
	*m = *om
	m.FxSync = fnptr(dbSync)
	switch kind {
	case wrapWAL:
		m.FxClose = fnptr(walClose)
		m.FxRead = fnptr(walRead)
		m.FxWrite = fnptr(walWrite)
		m.FxTruncate = fnptr(walTruncate)
		m.FxSync = fnptr(walSync)
		m.FxFileSize = fnptr(walFileSize)
		m.FxFileControl = fnptr(walFileControl)
	case wrapWriterDB:
		m.FxFileControl = fnptr(dbFileControl)
		m.FxShmLock = fnptr(walShmLock)
		m.FxShmMap = fnptr(walShmMap)
		m.FxShmUnmap = fnptr(walShmUnmap)
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

// The writer's read marks.
//
// Every transaction SQLite begins takes a read lock on one of the WAL
// index's four read marks, a frame number that tells a checkpoint how far
// it may copy while the lock is held; when no mark equals the log's last
// frame it first moves one, taking that mark's lock exclusive, storing the
// frame and releasing the lock. With the writer's own lock and the read
// lock's release that is six fcntl system calls a transaction, two of them
// the move, and each of the writer's commits leaves the log a frame past
// every mark, so every transaction moved one. A move is not needed to read:
// SQLite falls back to the highest mark at or below the log's end whenever
// every move is refused, as for a reader that finds all four marks busy,
// and the frames it reads past that mark are the WAL's all the same. What a
// move buys is a checkpoint that may copy further while the transaction
// lasts. So the writer's database file answers SQLite's attempts to move a
// mark as busy, without a system call, while some mark lies within
// markLag frames of the log's end (read from the WAL index), and moves
// marks as before otherwise: a checkpoint that overlaps one of the
// writer's transactions stops at most markLag frames short of where it
// would have stopped, and the checkpoints between transactions are not
// held back at all. Other processes see what they would see of a reader
// whose moves were refused; the locks themselves are the unix VFS's.
//
// A transaction's begin is recognised by its attempt to take one mark's
// lock exclusive while the connection holds no WAL-index lock at all: a
// checkpoint holds the checkpoint lock, and the log's restart and the
// index's recovery hold the writer's lock when they move marks. A begin
// that comes back to the first mark without having taken a read lock
// found none usable (SQLite then retries), and moves one for real.
//
// With no mark moved, a begin mostly chooses the mark the writer's last
// transaction read from, whose lock SQLite released at that end. So the
// writer keeps that read lock (a transaction's end that leaves it holding
// one read mark and nothing else is not passed on) and hands it back when
// the next begin asks for the same mark; anything else it asks for first
// lets the kept lock go, as does closing. A kept shared lock stops no
// reader, in this process or another; what it holds back, as a transaction
// would, is a checkpoint beyond that mark, which trails the log's end by
// at most markLag frames and the transactions since: while the host is
// busy the WAL is copied up to there, not wholly, and a RESTART or
// TRUNCATE checkpoint of another process finds the mark busy. The
// checkpointer's tick lets it go when no transaction is open
// (wtx.releaseReadLock), so an idle host's WAL is copied whole as before,
// and Store.Close lets it go before its last checkpoint.

const (
	shmLockExcl    = sqlite3.SQLITE_SHM_LOCK | sqlite3.SQLITE_SHM_EXCLUSIVE
	shmLockShare   = sqlite3.SQLITE_SHM_LOCK | sqlite3.SQLITE_SHM_SHARED
	shmUnlockShare = sqlite3.SQLITE_SHM_UNLOCK | sqlite3.SQLITE_SHM_SHARED
	// readLock1 is WAL_READ_LOCK(1), the first of readLocks movable marks.
	readLock1 = 4
	readLocks = 4
	// walIndexMxFrame is WalIndexHdr.mxFrame's offset in the index's first
	// region; walIndexReadMarks is WalCkptInfo.aReadMark[0]'s (after the
	// header's two 48-byte copies and nBackfill).
	walIndexMxFrame   = 16
	walIndexReadMarks = 100
	// markLag is how far, in frames, a mark may trail the log's end and
	// still serve the writer unmoved: 256 KiB of 4 KiB pages, a quarter of
	// the log from which the checkpointer asks the writer to copy the
	// tail (checkpoint.go).
	markLag = 64
)

func walShmLock(tls *libc.TLS, f uintptr, ofst, n, flags int32) int32 {
	s := state(f)
	readSlot := n == 1 && ofst >= readLock1 && ofst < readLock1+readLocks
	if flags == shmLockExcl && readSlot && s.held&^s.parkedMask() == 0 && s.skipMark(ofst) {
		markSkips.Add(1)
		return sqlite3.SQLITE_BUSY
	}
	if s.parked != 0 {
		if flags == shmLockShare && ofst == s.parked && n == 1 {
			s.parked, s.round = 0, 0
			parkReuses.Add(1)
			return sqlite3.SQLITE_OK
		}
		if rc := s.unpark(tls, f); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if flags == shmUnlockShare && readSlot && s.held == uint32(1)<<ofst && !s.sharedFile(f) {
		s.parked = ofst
		return sqlite3.SQLITE_OK
	}
	rc := callShmLock((*sqlite3.Tsqlite3_io_methods)(at(s.orig)).FxShmLock, tls, f, ofst, n, flags)
	if rc == sqlite3.SQLITE_OK {
		mask := uint32(1)<<(ofst+n) - uint32(1)<<ofst
		if flags&sqlite3.SQLITE_SHM_UNLOCK != 0 {
			s.held &^= mask
		} else {
			s.held |= mask
		}
	}
	if flags == shmLockShare {
		s.round = 0 // the begin chose its mark
	}
	return rc
}

// Another host on the file (walShmLock's parking).
//
// A kept read lock holds back every checkpoint past its mark and every
// restart of the log, which needs all four movable marks free
// (walRestartLog). A host's own kept lock is let go before its own
// checkpoints and restarts (its tick, its copy of the tail: walShmLock
// lets it go for any other lock), but another host on the file never
// sees it go: a second writer that writes at least once a tick (its lease
// renewals do) keeps a lock nearly always, and under steady writes from
// both the log never started over (50 MB after 5 s of the two-host
// load in host/fleet, none of its 16 restarts; 20 MB and restarts
// without the keeping). So the writer keeps its read lock only while no
// other writer has the file's WAL index open: another process's (one of
// theirs holds the index's DMS byte shared for as long as it has it open;
// a write lock's F_GETLK there names it, where this process's own locks
// never conflict), or another Store's in this process (writers). The
// other process's answer is cached for sharedCheckEvery, one fcntl a
// second at most, and asked afresh at each tick and copy of the tail
// (dbFileControl's query); a host that joins the file is seen within
// that, and until then its restarts wait, as they did for all of them
// before. Another Store in this process is counted at once (writers
// costs a lock, and only while some file has two: sharedInodes):
// cached, it was missed for the first second, and the other Store's
// RESTART copies waited their whole tailBusyMS on the kept lock, three
// times in a row, holding every write back meanwhile.

// sharedCheckEvery is how long sharedFile's answer stands.
const sharedCheckEvery = time.Second

// unixShmDMS is the WAL index file's byte every process with the index
// open holds a shared lock on (UNIX_SHM_DMS in the unix VFS).
const unixShmDMS = 128

// writers counts this process's writer connections (walShmMap) per unix
// VFS inode structure, one per file in a process; under wrappedMu.
var writers = map[uintptr]int{}

// sharedInodes counts the entries of writers over 1, read without the
// lock: while it is 0, as on a host alone, sharedFile takes no lock.
var sharedInodes atomic.Int32

// sharedFile reports whether another writer shares f's file.
func (s *walFile) sharedFile(f uintptr) bool {
	if s.inode == 0 {
		return true
	}
	if sharedInodes.Load() > 0 {
		wrappedMu.Lock()
		others := writers[s.inode] > 1
		wrappedMu.Unlock()
		if others {
			return true
		}
	}
	now := time.Now().UnixNano()
	if s.checked != 0 && now-s.checked < int64(sharedCheckEvery) {
		return s.shared != 0
	}
	s.checked = now
	shared := otherProcess(f)
	s.shared = 0
	if shared {
		s.shared = 1
	}
	return shared
}

// otherProcess reports whether another process holds f's WAL index open,
// from the unix VFS's descriptor of it; an answer it cannot get is yes,
// which only costs the kept lock.
func otherProcess(f uintptr) bool {
	u := (*sqlite3.TunixFile)(at(f))
	if u.FpInode == 0 {
		return true
	}
	node := (*sqlite3.TunixInodeInfo)(at(u.FpInode)).FpShmNode
	if node == 0 {
		return true
	}
	fd := (*sqlite3.TunixShmNode)(at(node)).FhShm
	if fd < 0 {
		return true
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: unixShmDMS, Len: 1}
	if err := syscall.FcntlFlock(uintptr(fd), syscall.F_GETLK, &lk); err != nil {
		return true
	}
	return lk.Type != syscall.F_UNLCK
}

func (s *walFile) parkedMask() uint32 {
	if s.parked == 0 {
		return 0
	}
	return uint32(1) << s.parked
}

// unpark releases the read lock kept from the last transaction.
func (s *walFile) unpark(tls *libc.TLS, f uintptr) int32 {
	ofst := s.parked
	s.parked = 0
	rc := callShmLock((*sqlite3.Tsqlite3_io_methods)(at(s.orig)).FxShmLock, tls, f, ofst, 1, shmUnlockShare)
	if rc == sqlite3.SQLITE_OK {
		s.held &^= uint32(1) << ofst
	}
	return rc
}

// skipMark reports whether the begin's attempt to move the mark whose lock
// is ofst is answered busy.
func (s *walFile) skipMark(ofst int32) bool {
	switch {
	case s.round < 0:
		return false
	case s.round >= ofst:
		// Back at a mark already refused, with no read lock taken: no
		// mark was usable, and this begin moves one.
		s.round = -1
		return false
	case s.round == 0 && !s.recentMark():
		s.round = -1
		return false
	}
	s.round = ofst
	return true
}

// recentMark reports whether one of the movable marks lies at most
// markLag frames before the log's end, from the WAL index.
func (s *walFile) recentMark() bool {
	if s.shm == 0 {
		return false
	}
	end := atomic.LoadUint32((*uint32)(at(s.shm + walIndexMxFrame)))
	for i := uintptr(1); i <= readLocks; i++ {
		m := atomic.LoadUint32((*uint32)(at(s.shm + walIndexReadMarks + 4*i)))
		if m <= end && end-m <= markLag {
			return true
		}
	}
	return false
}

// dbFileControl is the database file's xFileControl: a query of
// SQLITE_FCNTL_PERSIST_WAL, which SQLite never makes itself, first lets
// the kept read lock go (wtx.releaseReadLock).
//
// The query's answer also carries persistWALShared when another writer
// shares the file (sharedFile), for the writer's copy of the tail
// (wtx.begin).
func dbFileControl(tls *libc.TLS, f uintptr, op int32, pArg uintptr) int32 {
	s := state(f)
	query := op == sqlite3.SQLITE_FCNTL_PERSIST_WAL && pArg != 0 && *(*int32)(at(pArg)) < 0
	if op == sqlite3.SQLITE_FCNTL_PERSIST_WAL && s.parked != 0 {
		if rc := s.unpark(tls, f); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	rc := callFileControl((*sqlite3.Tsqlite3_io_methods)(at(s.orig)).FxFileControl, tls, f, op, pArg)
	if query {
		s.checked = 0 // asked at a tick or a copy of the tail: a fresh answer
	}
	if query && rc == sqlite3.SQLITE_OK && s.shm != 0 && s.sharedFile(f) {
		*(*int32)(at(pArg)) |= persistWALShared
	}
	return rc
}

func walShmMap(tls *libc.TLS, f uintptr, iPg, pgsz, bExtend int32, pp uintptr) int32 {
	s := state(f)
	rc := callShmMap((*sqlite3.Tsqlite3_io_methods)(at(s.orig)).FxShmMap, tls, f, iPg, pgsz, bExtend, pp)
	if iPg == 0 && rc == sqlite3.SQLITE_OK {
		s.shm = *(*uintptr)(at(pp))
		if u := (*sqlite3.TunixFile)(at(f)); s.inode == 0 && u.FpInode != 0 {
			s.inode = u.FpInode
			wrappedMu.Lock()
			if writers[s.inode]++; writers[s.inode] == 2 {
				sharedInodes.Add(1)
			}
			wrappedMu.Unlock()
		}
	}
	return rc
}

func walShmUnmap(tls *libc.TLS, f uintptr, deleteFlag int32) int32 {
	s := state(f)
	if s.parked != 0 {
		s.unpark(tls, f)
	}
	if s.inode != 0 {
		wrappedMu.Lock()
		if writers[s.inode] == 2 {
			sharedInodes.Add(-1)
		}
		if writers[s.inode]--; writers[s.inode] <= 0 {
			delete(writers, s.inode)
		}
		wrappedMu.Unlock()
	}
	s.shm, s.held, s.round, s.inode, s.checked = 0, 0, 0, 0, 0
	return callShmUnmap((*sqlite3.Tsqlite3_io_methods)(at(s.orig)).FxShmUnmap, tls, f, deleteFlag)
}

// state is f's walFile, after the unix VFS's structure.
func state(f uintptr) *walFile { return (*walFile)(at(f + unixSz)) }

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

func callShmLock(fp uintptr, tls *libc.TLS, f uintptr, ofst, n, flags int32) int32 {
	return (*(*func(*libc.TLS, uintptr, int32, int32, int32) int32)(unsafe.Pointer(&fp)))(tls, f, ofst, n, flags)
}

func callShmMap(fp uintptr, tls *libc.TLS, f uintptr, iPg, pgsz, bExtend int32, pp uintptr) int32 {
	return (*(*func(*libc.TLS, uintptr, int32, int32, int32, uintptr) int32)(unsafe.Pointer(&fp)))(tls, f, iPg, pgsz, bExtend, pp)
}

func callShmUnmap(fp uintptr, tls *libc.TLS, f uintptr, deleteFlag int32) int32 {
	return (*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&fp)))(tls, f, deleteFlag)
}

// walVFS is the VFS the writer opens its file through: walVFSName, or ""
// (the default) when it cannot be registered.
func walVFS() string {
	if registerWALVFS() != nil {
		return ""
	}
	return walVFSName
}

// checkpointVFS is the VFS the checkpointer opens its file through:
// syncVFSName, or "" (the default VFS) where it cannot be registered.
func checkpointVFS() string {
	if registerWALVFS() != nil {
		return ""
	}
	return syncVFSName
}
