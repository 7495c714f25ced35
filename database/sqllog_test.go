package database_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"shop/database"
)

// TestSQLLog: a slow statement and a failed one are logged, with their text
// cut to a kilobyte and without their arguments; a fast one is not.
func TestSQLLog(t *testing.T) {
	tests := []struct {
		name   string
		slow   time.Duration
		sql    string
		logged bool
		level  string
	}{
		{name: "fast", slow: time.Hour, sql: "SELECT COUNT(*) FROM products WHERE id IN ?"},
		{name: "slow and long", slow: time.Nanosecond, sql: "SELECT COUNT(*) FROM products WHERE id IN ?", logged: true, level: "WARN"},
		{name: "failed", slow: time.Hour, sql: "SELECT COUNT(*) FROM no_such_table WHERE id IN ?", logged: true, level: "ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			ctx := context.Background()
			db, err := database.Open(ctx, filepath.Join(t.TempDir(), "shop.db"), &database.Options{
				Logger:    slog.New(slog.NewJSONHandler(&buf, nil)),
				SlowQuery: tt.slow,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = database.Close(db) })
			if _, err := database.Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			buf.Reset()
			ids := make([]string, 1000) // 1,000 placeholders: "?," each
			for i := range ids {
				ids[i] = "secret-argument"
			}
			var n int64
			_ = db.Raw(tt.sql, ids).Scan(&n).Error
			if !tt.logged {
				if buf.Len() != 0 {
					t.Fatalf("logged %s, want nothing", buf.String())
				}
				return
			}
			var line struct {
				Level string
				Trace struct{ SQL string }
			}
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("want one JSON line, got %q: %v", buf.String(), err)
			}
			if line.Level != tt.level {
				t.Errorf("level %s, want %s", line.Level, tt.level)
			}
			if strings.Contains(buf.String(), "secret-argument") {
				t.Errorf("the line logs an argument: %s", buf.String())
			}
			// gorm writes the list's 1,000 placeholders as (?,?,…,?).
			want := "… (" + strconv.Itoa(len(tt.sql)+2000) + " bytes in all)"
			if len(line.Trace.SQL) > 1100 || !strings.HasSuffix(line.Trace.SQL, want) {
				t.Errorf("trace.sql is %d bytes, ending %q; want at most 1,100, ending %q", len(line.Trace.SQL), line.Trace.SQL[max(0, len(line.Trace.SQL)-40):], want)
			}
		})
	}
}
