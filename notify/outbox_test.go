package notify

import (
	"context"
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/database/dbtest"
)

// TestSweep: Sweep deletes the rows that ended (sent, failed) before the
// cutoff, in batches, and keeps the rest: those that ended later, and
// those still to deliver however old.
func TestSweep(t *testing.T) {
	defer func(n int) { sweepBatch = n }(sweepBatch)
	sweepBatch = 2 // five old ended rows: three statements
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		clk := newClock()
		cutoff := clk.Now().Add(-24 * time.Hour)
		rows := []struct {
			status  Status
			changed time.Time
			kept    bool
		}{
			{Sent, cutoff.Add(-time.Hour), false},
			{Sent, cutoff, false},
			{Failed, cutoff.Add(-time.Hour), false},
			{Sent, cutoff.Add(-48 * time.Hour), false},
			{Failed, cutoff.Add(-48 * time.Hour), false},
			{Sent, cutoff.Add(time.Second), true},
			{Failed, cutoff.Add(time.Second), true},
			{Pending, cutoff.Add(-48 * time.Hour), true},
			{Sending, cutoff.Add(-48 * time.Hour), true},
		}
		want := map[string]bool{}
		for i, r := range rows {
			key := fmt.Sprintf("ord_1/%d", i)
			enqueue(t, db, clk, testEmail(key))
			err := db.Model(&row{}).Where("dedupe_key = ?", key).Updates(map[string]any{"status": r.status, "updated_at": r.changed}).Error
			if err != nil {
				t.Fatal(err)
			}
			if r.kept {
				want[fmt.Sprintf("%s@%s", r.status, r.changed.Format(time.RFC3339))] = true
			}
		}
		n, err := emails(db).Sweep(context.Background(), cutoff)
		if err != nil || n != 5 {
			t.Fatalf("Sweep deleted %d (%v), want 5", n, err)
		}
		var left []row
		if err := db.Find(&left).Error; err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, r := range left {
			got[fmt.Sprintf("%s@%s", r.Status, r.UpdatedAt.UTC().Format(time.RFC3339))] = true
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("left %v, want %v", got, want)
		}
		if n, err := emails(db).Sweep(context.Background(), cutoff); err != nil || n != 0 {
			t.Fatalf("a second Sweep deleted %d (%v), want 0", n, err)
		}
	})
}
