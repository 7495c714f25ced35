package database

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// kept is how many statements the pool's one connection keeps.
func kept(t *testing.T, db *sql.DB) int {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n := -1
	if err := conn.Raw(func(dc any) error { n = len(dc.(*stmtConn).stmts); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSQLiteKeepsStatements: a SQLite connection runs a statement it ran
// before on the statement it prepared then, with the new arguments, and the
// answers are those of statements run as text: a query run inside the rows
// of the same query, an UPDATE … RETURNING in a transaction that then
// commits, a query after the table changed, more statements than it keeps.
func TestSQLiteKeepsStatements(t *testing.T) {
	ctx := context.Background()
	gdb, err := Open(ctx, filepath.Join(t.TempDir(), "s.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(gdb)
	db, _ := gdb.DB()
	db.SetMaxOpenConns(1)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
	base := kept(t, db)
	for i := range 50 {
		exec("INSERT INTO t (id, v) VALUES (?, ?)", i, i*10)
	}
	if got := kept(t, db); got != base+1 {
		t.Fatalf("after 50 inserts of one text: %d statements kept, want %d", got, base+1)
	}

	q := "SELECT id FROM t WHERE v >= ? ORDER BY id"
	rows, err := db.QueryContext(ctx, q, 470)
	if err != nil {
		t.Fatal(err)
	}
	var outer []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		outer = append(outer, id)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(outer) != "[47 48 49]" {
		t.Fatalf("outer rows %v", outer)
	}
	// The same query inside its own rows (one connection: a transaction's):
	// the inner one gets a statement of its own, the outer rows go on.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := tx.QueryContext(ctx, q, 480)
	if err != nil {
		t.Fatal(err)
	}
	var pairs []string
	for r1.Next() {
		var a int
		_ = r1.Scan(&a)
		r2, err := tx.QueryContext(ctx, q, 490)
		if err != nil {
			t.Fatal(err)
		}
		for r2.Next() {
			var b int
			_ = r2.Scan(&b)
			pairs = append(pairs, fmt.Sprint(a, b))
		}
		r2.Close()
	}
	r1.Close()
	if fmt.Sprint(pairs) != "[48 49 49 49]" {
		t.Fatalf("nested rows %v", pairs)
	}
	// An exec that returns rows, then the commit.
	if _, err := tx.ExecContext(ctx, "UPDATE t SET v = v + 1 WHERE id = ? RETURNING v", 1); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit after UPDATE … RETURNING: %v", err)
	}

	// The table changes: the kept statement answers the new columns.
	sel := "SELECT * FROM t WHERE id = ?"
	cols := func() int {
		rows, err := db.QueryContext(ctx, sel, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		c, _ := rows.Columns()
		return len(c)
	}
	if n := cols(); n != 2 {
		t.Fatalf("%d columns", n)
	}
	exec("ALTER TABLE t ADD COLUMN w INTEGER NOT NULL DEFAULT 7")
	if n := cols(); n != 3 {
		t.Fatalf("after ALTER TABLE: %d columns, want 3", n)
	}

	// More texts than a connection keeps: the least recently used go, the
	// answers stay right.
	for i := range stmtCacheSize + 20 {
		var v int
		if err := db.QueryRowContext(ctx, fmt.Sprintf("SELECT v + %d FROM t WHERE id = ?", i), 2).Scan(&v); err != nil || v != 20+i {
			t.Fatalf("query %d: %d, %v", i, v, err)
		}
	}
	if got := kept(t, db); got != stmtCacheSize {
		t.Fatalf("%d statements kept, want at most %d", got, stmtCacheSize)
	}
	var v int
	if err := db.QueryRowContext(ctx, "SELECT v FROM t WHERE id = ?", 1).Scan(&v); err != nil || v != 11 {
		t.Fatalf("v of 1 = %d, %v; want 11 (the UPDATE committed)", v, err)
	}
}

func TestCacheable(t *testing.T) {
	for _, c := range []struct {
		q    string
		exec bool
		want bool
	}{
		{"SELECT * FROM t WHERE id = ?", false, true},
		{"  select 1", false, true},
		{"SELECT 1", true, false},
		{"INSERT INTO t VALUES (?)", true, true},
		{"UPDATE counters SET value = value + 1 RETURNING value", true, false},
		{"UPDATE counters SET value = value + 1 RETURNING value", false, true},
		{"SAVEPOINT sp123", true, false},
		{"CREATE TABLE x (a)", true, false},
		{"DELETE FROM t; DELETE FROM u", true, false},
		{"PRAGMA foreign_keys", false, false},
		{"BEGIN IMMEDIATE", true, true},
		{"COMMIT", true, true},
		{"ROLLBACK", true, true},
		{"ROLLBACK TO SAVEPOINT sp123", true, false},
		{"COMMIT", false, false},
	} {
		if got := cacheable(c.q, c.exec); got != c.want {
			t.Errorf("cacheable(%q, exec %v) = %v, want %v", c.q, c.exec, got, c.want)
		}
	}
}
