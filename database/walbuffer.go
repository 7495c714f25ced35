package database

/*
int shop_register_wal_vfs(void);
*/
import "C"

import (
	"fmt"
	"sync"
)

// SQLite appends each page a transaction changes to the write-ahead log as
// a frame, in two writes (its header, then the page): a purchase's five
// commits made about 115 pwrite system calls a flow, the most frequent of
// the shop's system calls, each dear on the virtual machines the shop runs
// on (BENCHMARKS.md). walbuffer.c is a VFS, made SQLite's default, that
// passes everything on to the default it had (unix), but holds the frames a
// writer appends and writes a transaction's, or a writer's group's, in one
// system call when its commit frame is complete: before the commit can be
// seen by any reader, and written as SQLite wrote it, so the files, their
// locks and their recovery after a crash are SQLite's own. Only the logs
// are held; the database files, journals and shared memory are as they
// were.

var (
	walVFSOnce sync.Once
	walVFSErr  error
)

// useWALBuffer registers the VFS, once per process, before the first
// database opens.
func useWALBuffer() error {
	walVFSOnce.Do(func() {
		if rc := C.shop_register_wal_vfs(); rc != 0 {
			walVFSErr = fmt.Errorf("register the SQLite VFS shop-wal: SQLite error %d", int(rc))
		}
	})
	return walVFSErr
}
