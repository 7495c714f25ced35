package database_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"shop/database"
)

// TestCheckpointsInBackground: what commits append to SQLite's log reaches
// the database file without a commit checkpointing it (the pool's
// connections would only past 64 MiB of log): once the log passes 4 MiB the
// checkpointer copies it back within moments, and it stops when the
// database closes.
func TestCheckpointsInBackground(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.db")
	ctx := context.Background()
	db, err := database.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	if err := db.Exec("CREATE TABLE blobs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)").Error; err != nil {
		t.Fatal(err)
	}
	before := fileSize(t, path)
	body := strings.Repeat("x", 64<<10)
	for i := range 96 { // 6 MiB in 96 commits: past the checkpointer's 4 MiB, far below the connections' 64
		if err := db.Exec("INSERT INTO blobs (id, body) VALUES (?, ?)", i, body).Error; err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for fileSize(t, path) < before+6<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes 10 s after 6 MiB were committed (it was %d): nothing checkpointed the log",
				fileSize(t, path), before)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
