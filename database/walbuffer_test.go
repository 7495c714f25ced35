package database

import (
	"bufio"
	"context"
	"database/sql"
	"os"
	"strconv"
	"strings"
	"testing"
)

// openRaw opens the SQLite file path through the driver alone, as the
// pool's connections are opened, in a pool of one connection, with the
// log's VFS registered.
func openRaw(t *testing.T, path string) *sql.DB {
	t.Helper()
	if err := useWALBuffer(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", sqliteDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// writeCalls is how many write system calls (write, pwrite, …) the process
// has made.
func writeCalls(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "syscw: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("/proc/self/io has no syscw")
	return 0
}

func mustExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func count(t *testing.T, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestWALBufferOneWriteACommit: a commit's frames (here three rows of a
// table and its index, several pages) reach the log in one write, and a
// reader on another connection sees each commit as soon as it returns.
func TestWALBufferOneWriteACommit(t *testing.T) {
	path := t.TempDir() + "/w.db"
	w, r := openRaw(t, path), openRaw(t, path)
	mustExec(t, w, "PRAGMA wal_autocheckpoint = 0") // only the log is written to
	mustExec(t, w, "CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
	mustExec(t, w, "CREATE INDEX t_v ON t (v)")
	const commits = 100
	blob := strings.Repeat("x", 1500)
	before := writeCalls(t)
	for i := range commits {
		tx, err := w.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			if _, err := tx.Exec("INSERT INTO t (v) VALUES (?)", blob+strconv.Itoa(3*i+j)); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := count(t, r, "SELECT COUNT(*) FROM t"); got != 3*(i+1) {
			t.Fatalf("after commit %d the reader sees %d rows, want %d", i+1, got, 3*(i+1))
		}
	}
	calls := writeCalls(t) - before
	// Frame by frame, each commit would take two writes a page: at least
	// eight for its three rows and their index entries.
	if per := float64(calls) / commits; per > 1.5 {
		t.Errorf("%d write system calls for %d commits (%.1f each), want one a commit", calls, commits, per)
	}
	if got := count(t, r, "SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'"); got != 0 {
		t.Errorf("integrity_check: %d problems", got)
	}
}

// TestWALBufferRollbackThenOtherWriter: frames a transaction wrote into the
// log and then rolled back (a cache too small for it spills them) are not
// written over the frames another connection commits after it; every
// commit survives closing and opening the database again.
func TestWALBufferRollbackThenOtherWriter(t *testing.T) {
	path := t.TempDir() + "/r.db"
	a, b := openRaw(t, path), openRaw(t, path)
	mustExec(t, a, "CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT, v BLOB)")
	mustExec(t, a, "PRAGMA cache_size = 5") // the pool's one connection keeps it
	// An empty log: the rollback reads nothing back from it, which would
	// write what is held.
	mustExec(t, a, "PRAGMA wal_checkpoint(TRUNCATE)")
	blob := strings.Repeat("y", 2000)

	tx, err := a.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for range 300 { // 600 KB: spilled into the log before the rollback
		if _, err := tx.Exec("INSERT INTO t (who, v) VALUES ('rolled back', ?)", blob); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	for range 50 {
		mustExec(t, b, "INSERT INTO t (who, v) VALUES ('b', ?)", blob)
	}
	mustExec(t, a, "INSERT INTO t (who, v) VALUES ('a', ?)", blob)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	c := openRaw(t, path)
	for _, tc := range []struct {
		who  string
		want int
	}{{"rolled back", 0}, {"b", 50}, {"a", 1}} {
		if got := count(t, c, "SELECT COUNT(*) FROM t WHERE who = ?", tc.who); got != tc.want {
			t.Errorf("%d rows of %s, want %d", got, tc.who, tc.want)
		}
	}
	if got := count(t, c, "SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'"); got != 0 {
		t.Errorf("integrity_check: %d problems", got)
	}
}
