package checkout_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime/metrics"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
)

// BenchmarkComplete measures complete_checkout alone on SQLite, with the
// sandbox: the claim (re-price, holds, attempt), the charge and the order's
// transaction. Each session is readied just before it is paid, outside the
// timer, so that the live holds stay few whatever b.N is.
func BenchmarkComplete(b *testing.B) {
	ctx := context.Background()
	_, p := stockedShop(b, "sqlite")
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

// BenchmarkCompleteLines is BenchmarkComplete with carts of 1, 10 and 50
// lines (one unit of each of that many variants), on SQLite and, when
// dbtest has it, PostgreSQL: how completion's cost grows with the cart.
func BenchmarkCompleteLines(b *testing.B) {
	for _, d := range dbtest.Dialects {
		for _, n := range []int{1, 10, 50} {
			b.Run(fmt.Sprintf("%s/lines=%d", d, n), func(b *testing.B) {
				ctx := context.Background()
				db, p := stockedShop(b, d)
				var ids []string
				if err := db.Raw("SELECT id FROM variants ORDER BY id LIMIT ?", n).Scan(&ids).Error; err != nil || len(ids) != n {
					b.Fatalf("%d variants: %v", len(ids), err)
				}
				cart := make([]checkout.Item, n)
				for i, id := range ids {
					cart[i] = checkout.Item{ID: id, Quantity: 1}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					s, err := p.co.Create(ctx, checkout.Request{Items: &cart, Address: californian,
						Buyer: &checkout.Buyer{Name: "Ada Lovelace", Email: "ada@example.com"}})
					if err != nil || s.Status != checkout.Ready {
						b.Fatalf("ready session: %v %+v", err, s)
					}
					b.StartTimer()
					s, err = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
					if err != nil || s.Status != checkout.Completed || len(s.LineItems) != n {
						b.Fatalf("complete: %v %+v", err, s)
					}
				}
			})
		}
	}
}

// BenchmarkPurchaseFlow is the bench's purchase without MCP or HTTP: a
// session of three lines created, given its buyer and address, and paid
// with the sandbox, a new buyer each time.
func BenchmarkPurchaseFlow(b *testing.B) {
	ctx := context.Background()
	db, p := stockedShop(b, "sqlite")
	var ids []string
	if err := db.Raw("SELECT id FROM variants ORDER BY id LIMIT 3").Scan(&ids).Error; err != nil || len(ids) != 3 {
		b.Fatalf("%d variants: %v", len(ids), err)
	}
	cart := []checkout.Item{{ID: ids[0], Quantity: 1}, {ID: ids[1], Quantity: 2}, {ID: ids[2], Quantity: 1}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := p.purchase(ctx, cart, fmt.Sprintf("ada%d@example.com", i)); err != nil {
			b.Fatal(err)
		}
	}
}

// purchase is one flow of the purchase benchmarks: a session of cart
// created, given a buyer of that email and an address, and paid with the
// sandbox.
func (p *paying) purchase(ctx context.Context, cart []checkout.Item, email string) error {
	s, err := p.co.Create(ctx, checkout.Request{Items: &cart})
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	buyer := &checkout.Buyer{Name: "Ada Lovelace", Email: email}
	if s, err = p.co.Update(ctx, s.ID, checkout.Request{Address: californian, Buyer: buyer}); err != nil || s.Status != checkout.Ready {
		return fmt.Errorf("update: %v %+v", err, s)
	}
	s, err = p.co.Complete(ctx, checkout.CompleteRequest{SessionID: s.ID, Payment: pay("pm_card_visa")})
	if err != nil || s.Status != checkout.Completed {
		return fmt.Errorf("complete: %v %+v", err, s)
	}
	return nil
}

// stockedShop is the paying demo shop on a new database of engine d, with
// stock enough for any benchmark.
func stockedShop(b *testing.B, d database.Dialect) (*gorm.DB, *paying) {
	b.Helper()
	db := dbtest.Open(b, d)
	p := payingShop(b, db, nil)
	if err := db.Exec("UPDATE variants SET stock = 1000000").Error; err != nil {
		b.Fatal(err)
	}
	return db, p
}

// BenchmarkPurchaseFlowParallel is BenchmarkPurchaseFlow with flows side by
// side, four for each of GOMAXPROCS (8 on 2 cores, as the bench's clients),
// each of a new buyer and three variants drawn from the demo catalog: what
// the connections' page caches and the writers' turns cost under load. It
// reports the process's CPU time per flow (cpu-µs/op) beside the time.
func BenchmarkPurchaseFlowParallel(b *testing.B) {
	ctx := context.Background()
	db, p := stockedShop(b, "sqlite")
	var ids []string
	if err := db.Raw("SELECT id FROM variants ORDER BY id").Scan(&ids).Error; err != nil || len(ids) < 3 {
		b.Fatalf("%d variants: %v", len(ids), err)
	}
	var buyers atomic.Int64
	b.SetParallelism(4)
	b.ReportAllocs()
	start, created := cpuTime(b), goroutinesCreated()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(uint64(buyers.Add(1)), 1))
		for pb.Next() {
			cart := make([]checkout.Item, 0, 3)
			for _, i := range rng.Perm(len(ids))[:3] {
				cart = append(cart, checkout.Item{ID: ids[i], Quantity: 1})
			}
			// Each flow's calls on a context of their own that can be
			// canceled, as an HTTP request's.
			fctx, cancel := context.WithCancel(ctx)
			err := p.purchase(fctx, cart, fmt.Sprintf("ada%d@example.com", buyers.Add(1)))
			cancel()
			if err != nil {
				b.Error(err) // not Fatal: this is not the benchmark's goroutine
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(goroutinesCreated()-created)/float64(b.N), "goroutines/op")
}

// goroutinesCreated is how many goroutines the process has started.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
