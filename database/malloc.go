package database

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
static int keep_freed_memory(int bytes) { return mallopt(M_TRIM_THRESHOLD, bytes); }
#else
static int keep_freed_memory(int bytes) { return 0; }
#endif
*/
import "C"

import (
	"os"
	"sync"
)

// SQLite allocates with the C library's malloc, on whichever thread the Go
// runtime runs its call. glibc gives those threads arenas of their own (up
// to eight a core) and hands an arena's free top back to the kernel
// (madvise) once it passes the trim threshold, 128 KiB at first. A pool
// connection empties its page cache whenever another connection has
// committed since its last read (that is how SQLite keeps a reader's pages
// current in WAL mode), so under load every read frees and allocates again
// a cache's worth of pages: glibc gave them back and the kernel faulted
// them in anew, a flush of both cores' TLBs each time. Measured on the
// purchase flow (BENCHMARKS.md, "SQLite's allocator"), that churn was about
// 5 % of the server's CPU, and the CPU a flow fell as much without it.
// keepFreedMemoryBytes lets an arena keep that much free memory at its top
// for the next allocation; what SQLite holds at its peak is bounded by its
// page caches (cache_size, per connection), so the process keeps no more
// than it has already used.
const keepFreedMemoryBytes = 64 << 20

var keepFreedMemoryOnce sync.Once

// keepFreedMemory sets glibc's trim threshold for SQLite's allocations,
// once per process, unless the operator set it (MALLOC_TRIM_THRESHOLD_,
// which glibc reads itself). Other C libraries are left as they are.
func keepFreedMemory() {
	keepFreedMemoryOnce.Do(func() {
		if _, set := os.LookupEnv("MALLOC_TRIM_THRESHOLD_"); set {
			return
		}
		C.keep_freed_memory(C.int(keepFreedMemoryBytes))
	})
}
