package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
)

// Checkpoints off the request path. In WAL mode a commit appends its pages to
// the log, and SQLite copies the log back into the database file (a
// checkpoint) when a commit finds the log past wal_autocheckpoint pages,
// 1,000 by default: that commit then copies every page the log holds and
// syncs both files before it returns, while its transaction still has the
// write turn (tx.go), a pause of the writer's whole queue. Here each SQLite
// pool has a checkpointer with a connection of its own that checkpoints the
// log, once it has grown, every checkpointEvery without blocking anyone
// (PASSIVE: it copies what no reader still needs, while writers go on), and
// the pool's connections checkpoint by themselves only past
// fallbackCheckpointPages, should the checkpointer fall that far behind.
// Durability does not depend on it: every commit is synced to the log before
// it returns (durable.go).

// checkpointEvery is how often the checkpointer looks at the log, and
// copies it back once the log file has reached checkpointFrom bytes (a
// database written to a little, as in the tests, is left to SQLite's
// checkpoint when it closes: a checkpoint syncs both files).
const (
	checkpointEvery = 200 * time.Millisecond
	checkpointFrom  = 4 << 20 // SQLite's own threshold: 1,000 pages of 4 KiB
)

// fallbackCheckpointPages is the wal_autocheckpoint of the pool's
// connections (4 KiB pages: 64 MiB of log).
const fallbackCheckpointPages = 16384

// walSizeLimit is the journal_size_limit of the pool's connections: the
// size the log file is cut back to once a checkpoint has emptied it.
const walSizeLimit = 64 << 20

// checkpointer copies a SQLite database's log back into its file.
type checkpointer struct {
	conn *sql.DB
	// wal is the log file's path, "" when the DSN names no file (then
	// every tick checkpoints).
	wal    string
	logger *slog.Logger
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// startCheckpoints starts the checkpointer of the SQLite database at path
// (a file path, or a file: URI) behind c, on a connection of its own.
func startCheckpoints(c driver.Connector, path string, logger *slog.Logger) *checkpointer {
	conn := sql.OpenDB(c)
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxIdleTime(0)
	cp := &checkpointer{conn: conn, logger: logger, stop: make(chan struct{}), done: make(chan struct{})}
	if !strings.HasPrefix(path, "file:") && path != ":memory:" {
		cp.wal = path + "-wal"
	}
	go cp.run()
	return cp
}

func (cp *checkpointer) run() {
	defer close(cp.done)
	tick := time.NewTicker(checkpointEvery)
	defer tick.Stop()
	var logged time.Time // the last failure logged: at most one line a minute
	for {
		select {
		case <-cp.stop:
			return
		case <-tick.C:
		}
		if cp.wal != "" {
			if fi, err := os.Stat(cp.wal); err != nil || fi.Size() < checkpointFrom {
				continue // no log yet, or a small one
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := cp.conn.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		cancel()
		var lite sqlite3.Error
		if err != nil && !(errors.As(err, &lite) && lite.Code == sqlite3.ErrBusy) && cp.logger != nil && time.Since(logged) > time.Minute {
			// Another checkpoint running is SQLITE_BUSY: the next tick
			// tries again. Anything else is worth a line, not a stop.
			cp.logger.Warn("sqlite checkpoint failed; the next commits past 64 MiB of log checkpoint it themselves", "err", err)
			logged = time.Now()
		}
	}
}

// close stops the checkpointer and closes its connection.
func (cp *checkpointer) close() {
	cp.once.Do(func() {
		close(cp.stop)
		<-cp.done
		_ = cp.conn.Close()
	})
}
