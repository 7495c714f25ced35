// The write-ahead log's writes, gathered: see walbuffer.go.

#include <stdlib.h>
#include <string.h>

// The SQLite declarations a VFS uses, as sqlite3.h has them (stable since
// SQLite 3.7: a VFS of version 3 and files of version 3). The library is
// compiled into github.com/mattn/go-sqlite3, which keeps its header to itself;
// its functions are linked into the same program.
typedef long long sqlite3_int64;
typedef struct sqlite3_file sqlite3_file;
typedef struct sqlite3_io_methods sqlite3_io_methods;
typedef struct sqlite3_vfs sqlite3_vfs;
typedef void (*sqlite3_syscall_ptr)(void);

struct sqlite3_file {
	const sqlite3_io_methods *pMethods;
};

struct sqlite3_io_methods {
	int iVersion;
	int (*xClose)(sqlite3_file *);
	int (*xRead)(sqlite3_file *, void *, int iAmt, sqlite3_int64 iOfst);
	int (*xWrite)(sqlite3_file *, const void *, int iAmt, sqlite3_int64 iOfst);
	int (*xTruncate)(sqlite3_file *, sqlite3_int64 size);
	int (*xSync)(sqlite3_file *, int flags);
	int (*xFileSize)(sqlite3_file *, sqlite3_int64 *pSize);
	int (*xLock)(sqlite3_file *, int);
	int (*xUnlock)(sqlite3_file *, int);
	int (*xCheckReservedLock)(sqlite3_file *, int *pResOut);
	int (*xFileControl)(sqlite3_file *, int op, void *pArg);
	int (*xSectorSize)(sqlite3_file *);
	int (*xDeviceCharacteristics)(sqlite3_file *);
	int (*xShmMap)(sqlite3_file *, int iPg, int pgsz, int, void volatile **);
	int (*xShmLock)(sqlite3_file *, int offset, int n, int flags);
	void (*xShmBarrier)(sqlite3_file *);
	int (*xShmUnmap)(sqlite3_file *, int deleteFlag);
	int (*xFetch)(sqlite3_file *, sqlite3_int64 iOfst, int iAmt, void **pp);
	int (*xUnfetch)(sqlite3_file *, sqlite3_int64 iOfst, void *p);
};

struct sqlite3_vfs {
	int iVersion;
	int szOsFile;
	int mxPathname;
	sqlite3_vfs *pNext;
	const char *zName;
	void *pAppData;
	int (*xOpen)(sqlite3_vfs *, const char *zName, sqlite3_file *, int flags, int *pOutFlags);
	int (*xDelete)(sqlite3_vfs *, const char *zName, int syncDir);
	int (*xAccess)(sqlite3_vfs *, const char *zName, int flags, int *pResOut);
	int (*xFullPathname)(sqlite3_vfs *, const char *zName, int nOut, char *zOut);
	void *(*xDlOpen)(sqlite3_vfs *, const char *zFilename);
	void (*xDlError)(sqlite3_vfs *, int nByte, char *zErrMsg);
	void (*(*xDlSym)(sqlite3_vfs *, void *, const char *zSymbol))(void);
	void (*xDlClose)(sqlite3_vfs *, void *);
	int (*xRandomness)(sqlite3_vfs *, int nByte, char *zOut);
	int (*xSleep)(sqlite3_vfs *, int microseconds);
	int (*xCurrentTime)(sqlite3_vfs *, double *);
	int (*xGetLastError)(sqlite3_vfs *, int, char *);
	int (*xCurrentTimeInt64)(sqlite3_vfs *, sqlite3_int64 *);
	int (*xSetSystemCall)(sqlite3_vfs *, const char *zName, sqlite3_syscall_ptr);
	sqlite3_syscall_ptr (*xGetSystemCall)(sqlite3_vfs *, const char *zName);
	const char *(*xNextSystemCall)(sqlite3_vfs *, const char *zName);
};

#define SQLITE_OK 0
#define SQLITE_ERROR 1
#define SQLITE_NOMEM 7
#define SQLITE_OPEN_WAL 0x00080000

extern sqlite3_vfs *sqlite3_vfs_find(const char *zVfsName);
extern int sqlite3_vfs_register(sqlite3_vfs *, int makeDflt);
extern sqlite3_file *sqlite3_database_file_object(const char *);

// A log's frame: a 24-byte header, then the page. The header's second
// big-endian word is the database's size in pages after a commit, in the
// frame that ends one, and zero in every other frame.
#define FRAME_HEADER 24
#define LOG_HEADER 32

// The bytes a log's buffer grows to, at most: a larger run of writes is
// written as it comes, a buffer at a time.
#define BUFFER_MAX (1 << 20)

// The bytes of one write the default VFS takes: unix writes less than 128
// KiB a call (it masks the size to 17 bits).
#define WRITE_MAX (124 << 10)

// walFile is a file of the VFS: the default VFS's file (real) and, for a
// write-ahead log, the writes not yet passed on to it.
typedef struct walFile walFile;
struct walFile {
	sqlite3_file base;
	sqlite3_file *real; // right after this struct
	int wal;            // a write-ahead log
	int commit;         // the last write held is a commit frame's header
	int n, cap;         // bytes held in buf, and its size
	sqlite3_int64 off;  // where buf's bytes go in the file
	sqlite3_int64 next; // where the log's next frame goes, -1 until known
	char *buf;
	walFile *log; // of a database: its log's file, while it is open
	walFile *db;  // of a log: its database's file
};

static sqlite3_vfs *dflt; // the VFS this one passes everything on to
static sqlite3_vfs walVfs;
static sqlite3_io_methods walMethods;

// flush writes what p holds. What it held is dropped even when the write
// fails: the write's caller fails, and SQLite writes those frames again.
static int flush(walFile *p) {
	int rc = SQLITE_OK;
	for (int done = 0; done < p->n && rc == SQLITE_OK; done += WRITE_MAX) {
		int amt = p->n - done < WRITE_MAX ? p->n - done : WRITE_MAX;
		rc = p->real->pMethods->xWrite(p->real, p->buf + done, amt, p->off + done);
	}
	p->n = 0;
	p->commit = 0;
	return rc;
}

// flushLog writes what the log of the database p holds, if any.
static int flushLog(walFile *p) {
	return p->log != NULL ? flush(p->log) : SQLITE_OK;
}

static unsigned int be32(const unsigned char *b) {
	return ((unsigned int)b[0] << 24) | ((unsigned int)b[1] << 16) | ((unsigned int)b[2] << 8) | b[3];
}

// hold makes room in p's buffer for amt more bytes, up to BUFFER_MAX; it
// reports whether it could.
static int hold(walFile *p, int amt) {
	if (p->n + amt <= p->cap) {
		return 1;
	}
	if (p->n + amt > BUFFER_MAX) {
		return 0;
	}
	int cap = p->cap ? p->cap : 64 << 10;
	while (cap < p->n + amt) {
		cap *= 2;
	}
	char *buf = realloc(p->buf, cap);
	if (buf == NULL) {
		return 0;
	}
	p->buf = buf;
	p->cap = cap;
	return 1;
}

// walWrite holds the frames a log's writer appends and writes them at once
// when the page of a commit frame arrives: the whole transaction, or the
// writer's group, in one system call instead of two a page. A write that
// does not append (a frame written again in place, its checksums
// rewritten) is passed on at once, after what is held.
//
// SQLite makes a commit visible to readers only after that page's write
// returns, by the log's index in shared memory, so no reader looks for a
// frame still held; a crash before it loses a transaction that had not
// committed, as a crash between two of the writes would. Whatever else uses
// the log (a read, a sync, a truncation) or its database's shared memory (a
// lock taken or released, the barrier before a commit is published) writes
// what is held first, so that frames of a transaction rolled back are never
// written after another writer's.
static int walWrite(sqlite3_file *f, const void *data, int amt, sqlite3_int64 off) {
	walFile *p = (walFile *)f;
	int rc;
	if (!p->wal) {
		return p->real->pMethods->xWrite(p->real, data, amt, off);
	}
	int follows = p->n > 0 && off == p->off + p->n;
	int commitPage = p->commit && follows;
	if (p->n > 0 && (!follows || !hold(p, amt))) {
		if ((rc = flush(p)) != SQLITE_OK) {
			return rc;
		}
	}
	int append = p->n > 0 || off == p->next || (off == 0 && amt == LOG_HEADER);
	if (!append || !hold(p, amt)) {
		if ((rc = flush(p)) != SQLITE_OK) {
			return rc;
		}
		rc = p->real->pMethods->xWrite(p->real, data, amt, off);
		if (rc == SQLITE_OK && off + amt > p->next) {
			p->next = off + amt;
		}
		return rc;
	}
	if (p->n == 0) {
		p->off = off;
	}
	memcpy(p->buf + p->n, data, amt);
	p->n += amt;
	p->next = p->off + p->n;
	if (commitPage) {
		return flush(p); // the commit frame's page: the transaction is whole
	}
	if (amt == FRAME_HEADER && off >= LOG_HEADER && be32((const unsigned char *)data + 4) != 0) {
		p->commit = 1;
	}
	return SQLITE_OK;
}

static int walClose(sqlite3_file *f) {
	walFile *p = (walFile *)f;
	int rc = flush(p);
	int rc2 = p->real->pMethods->xClose(p->real);
	free(p->buf);
	p->buf = NULL;
	p->cap = 0;
	if (p->db != NULL && p->db->log == p) {
		p->db->log = NULL;
	}
	if (p->log != NULL) {
		p->log->db = NULL;
	}
	return rc != SQLITE_OK ? rc : rc2;
}

static int walRead(sqlite3_file *f, void *data, int amt, sqlite3_int64 off) {
	walFile *p = (walFile *)f;
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xRead(p->real, data, amt, off);
}

static int walTruncate(sqlite3_file *f, sqlite3_int64 size) {
	walFile *p = (walFile *)f;
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xTruncate(p->real, size);
}

static int walSync(sqlite3_file *f, int flags) {
	walFile *p = (walFile *)f;
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xSync(p->real, flags);
}

static int walFileSize(sqlite3_file *f, sqlite3_int64 *size) {
	walFile *p = (walFile *)f;
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xFileSize(p->real, size);
}

static int walLock(sqlite3_file *f, int lock) {
	walFile *p = (walFile *)f;
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xLock(p->real, lock);
}

static int walUnlock(sqlite3_file *f, int lock) {
	walFile *p = (walFile *)f;
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xUnlock(p->real, lock);
}

static int walCheckReservedLock(sqlite3_file *f, int *out) {
	walFile *p = (walFile *)f;
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int walFileControl(sqlite3_file *f, int op, void *arg) {
	walFile *p = (walFile *)f;
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xFileControl(p->real, op, arg);
}

static int walSectorSize(sqlite3_file *f) {
	walFile *p = (walFile *)f;
	return p->real->pMethods->xSectorSize(p->real);
}

static int walDeviceCharacteristics(sqlite3_file *f) {
	walFile *p = (walFile *)f;
	return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static int walShmMap(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp) {
	walFile *p = (walFile *)f;
	return p->real->pMethods->xShmMap(p->real, pg, pgsz, extend, pp);
}

static int walShmLock(sqlite3_file *f, int offset, int n, int flags) {
	walFile *p = (walFile *)f;
	int rc = flushLog(p);
	int rc2 = p->real->pMethods->xShmLock(p->real, offset, n, flags);
	return rc != SQLITE_OK ? rc : rc2;
}

static void walShmBarrier(sqlite3_file *f) {
	walFile *p = (walFile *)f;
	flushLog(p); // a guard: the commit frame's page wrote what was held
	p->real->pMethods->xShmBarrier(p->real);
}

static int walShmUnmap(sqlite3_file *f, int deleteFlag) {
	walFile *p = (walFile *)f;
	return p->real->pMethods->xShmUnmap(p->real, deleteFlag);
}

static int walFetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp) {
	walFile *p = (walFile *)f;
	int rc = flush(p);
	return rc != SQLITE_OK ? rc : p->real->pMethods->xFetch(p->real, off, amt, pp);
}

static int walUnfetch(sqlite3_file *f, sqlite3_int64 off, void *ptr) {
	walFile *p = (walFile *)f;
	return p->real->pMethods->xUnfetch(p->real, off, ptr);
}

static int walOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *outFlags) {
	walFile *p = (walFile *)f;
	memset(p, 0, sizeof(*p));
	p->real = (sqlite3_file *)&p[1];
	p->next = -1;
	int rc = dflt->xOpen(dflt, name, p->real, flags, outFlags);
	// SQLite closes a file whose open failed only when it has methods.
	p->base.pMethods = p->real->pMethods ? &walMethods : NULL;
	if (rc == SQLITE_OK && p->base.pMethods != NULL && (flags & SQLITE_OPEN_WAL) != 0 && name != NULL) {
		// The database's file is this VFS's too: SQLite opened it first,
		// through the default VFS, which this one is.
		sqlite3_file *db = sqlite3_database_file_object(name);
		if (db != NULL && db->pMethods == &walMethods) {
			p->wal = 1;
			p->db = (walFile *)db;
			p->db->log = p;
		}
	}
	return rc;
}

// The VFS's other methods pass the default VFS on, as its own.

static int walDelete(sqlite3_vfs *vfs, const char *name, int syncDir) { return dflt->xDelete(dflt, name, syncDir); }
static int walAccess(sqlite3_vfs *vfs, const char *name, int flags, int *out) { return dflt->xAccess(dflt, name, flags, out); }
static int walFullPathname(sqlite3_vfs *vfs, const char *name, int n, char *out) { return dflt->xFullPathname(dflt, name, n, out); }
static void *walDlOpen(sqlite3_vfs *vfs, const char *name) { return dflt->xDlOpen(dflt, name); }
static void walDlError(sqlite3_vfs *vfs, int n, char *msg) { dflt->xDlError(dflt, n, msg); }
static void (*walDlSym(sqlite3_vfs *vfs, void *h, const char *sym))(void) { return dflt->xDlSym(dflt, h, sym); }
static void walDlClose(sqlite3_vfs *vfs, void *h) { dflt->xDlClose(dflt, h); }
static int walRandomness(sqlite3_vfs *vfs, int n, char *out) { return dflt->xRandomness(dflt, n, out); }
static int walSleep(sqlite3_vfs *vfs, int us) { return dflt->xSleep(dflt, us); }
static int walCurrentTime(sqlite3_vfs *vfs, double *t) { return dflt->xCurrentTime(dflt, t); }
static int walGetLastError(sqlite3_vfs *vfs, int n, char *msg) { return dflt->xGetLastError(dflt, n, msg); }
static int walCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *t) { return dflt->xCurrentTimeInt64(dflt, t); }

// shop_register_wal_vfs makes the VFS SQLite's default, in front of the
// default it had; it answers SQLITE_OK, or SQLITE_ERROR when that default is
// not of version 2 at least (shared memory, which WAL mode needs).
int shop_register_wal_vfs(void) {
	dflt = sqlite3_vfs_find(NULL);
	if (dflt == NULL || dflt->iVersion < 2) {
		return SQLITE_ERROR;
	}
	walMethods = (sqlite3_io_methods){
		.iVersion = 3,
		.xClose = walClose,
		.xRead = walRead,
		.xWrite = walWrite,
		.xTruncate = walTruncate,
		.xSync = walSync,
		.xFileSize = walFileSize,
		.xLock = walLock,
		.xUnlock = walUnlock,
		.xCheckReservedLock = walCheckReservedLock,
		.xFileControl = walFileControl,
		.xSectorSize = walSectorSize,
		.xDeviceCharacteristics = walDeviceCharacteristics,
		.xShmMap = walShmMap,
		.xShmLock = walShmLock,
		.xShmBarrier = walShmBarrier,
		.xShmUnmap = walShmUnmap,
		.xFetch = walFetch,
		.xUnfetch = walUnfetch,
	};
	walVfs = (sqlite3_vfs){
		.iVersion = 2,
		.szOsFile = (int)sizeof(walFile) + dflt->szOsFile,
		.mxPathname = dflt->mxPathname,
		.zName = "shop-wal",
		.xOpen = walOpen,
		.xDelete = walDelete,
		.xAccess = walAccess,
		.xFullPathname = walFullPathname,
		.xDlOpen = walDlOpen,
		.xDlError = walDlError,
		.xDlSym = walDlSym,
		.xDlClose = walDlClose,
		.xRandomness = walRandomness,
		.xSleep = walSleep,
		.xCurrentTime = walCurrentTime,
		.xGetLastError = walGetLastError,
		.xCurrentTimeInt64 = walCurrentTimeInt64,
	};
	return sqlite3_vfs_register(&walVfs, 1);
}
