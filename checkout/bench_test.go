package checkout_test

import (
	"context"
	"testing"

	"shop/checkout"
	"shop/database/dbtest"
)

// BenchmarkComplete measures complete_checkout alone on SQLite, with the
// sandbox: the claim (re-price, holds, attempt), the charge and the order's
// transaction. Each session is readied just before it is paid, outside the
// timer, so that the live holds stay few whatever b.N is.
func BenchmarkComplete(b *testing.B) {
	ctx := context.Background()
	db := dbtest.Open(b, "sqlite")
	p := payingShop(b, db, nil)
	if err := db.Exec("UPDATE variants SET stock = 1000000").Error; err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		id := p.ready(b).ID
		b.StartTimer()
		s, err := p.co.Complete(ctx, checkout.CompleteRequest{SessionID: id, Payment: pay("pm_card_visa")})
		if err != nil || s.Status != checkout.Completed {
			b.Fatalf("complete: %v %+v", err, s)
		}
	}
}
