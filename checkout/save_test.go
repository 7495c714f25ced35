package checkout_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"shop/checkout"
	"shop/database/dbtest"
)

// TestSaveSetsWhatChanged: a session's save sets, of the columns that the
// indexes of checkout_sessions hold, only those that changed, since SQLite
// rewrites the entries of every index whose column an UPDATE sets, changed
// or not. A SQLite trigger on UPDATE OF a column fires when the statement
// sets it, whatever the value, so the triggers below log what each call set.
func TestSaveSetsWhatChanged(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Open(t, "sqlite")
	p := payingShop(t, db, nil)
	s := p.ready(t)
	if err := db.Exec("CREATE TABLE set_columns (name TEXT NOT NULL)").Error; err != nil {
		t.Fatal(err)
	}
	indexed := []string{"status", "expires_at", "updated_at", "buyer_email"}
	for _, col := range indexed {
		err := db.Exec(fmt.Sprintf("CREATE TRIGGER set_%[1]s AFTER UPDATE OF %[1]s ON checkout_sessions BEGIN INSERT INTO set_columns VALUES ('%[1]s'); END", col)).Error
		if err != nil {
			t.Fatal(err)
		}
	}
	set := func() []string {
		t.Helper()
		var names []string
		if err := db.Raw("SELECT name FROM set_columns").Scan(&names).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.Exec("DELETE FROM set_columns").Error; err != nil {
			t.Fatal(err)
		}
		slices.Sort(names)
		return slices.Compact(names)
	}

	p.clk.Add(time.Minute) // a real change a minute on: a new expiry and last change
	if _, err := p.co.Update(ctx, s.ID, checkout.Request{Metadata: map[string]string{"note": "gift"}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"expires_at", "updated_at"}, set()); diff != "" {
		t.Errorf("an update of the metadata set (-want +got):\n%s", diff)
	}
	p.clk.Add(time.Minute)
	paid, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
	if err != nil || paid.Status != checkout.Completed {
		t.Fatalf("complete: %v %+v", err, paid)
	}
	// The claim keeps the expiry and last change the buyer agreed to; the
	// order is the session's end.
	if diff := cmp.Diff([]string{"status", "updated_at"}, set()); diff != "" {
		t.Errorf("complete_checkout set (-want +got):\n%s", diff)
	}
}
