package orders_test

import (
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/database/dbtest"
	"shop/orders"
)

// TestAdminGetOrderAttemptsPaged: an order whose session was tried 301
// times answers its 20 newest attempts, oldest first, with the total and a
// cursor; the cursors walk every attempt once, and a cursor of another
// order, or not a cursor, is refused naming attempts_cursor.
func TestAdminGetOrderAttemptsPaged(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		d := newReadDesk(t, db)
		ord := d.place(t, "jane@example.com", "Jane Doe", day0, orders.StatusConfirmed)
		other := d.place(t, "bo@example.com", "Bo", day0, orders.StatusConfirmed)
		const n = 301
		for i := 1; i <= n; i++ {
			status, code := "declined", "card_declined"
			if i == n {
				status, code = "succeeded", ""
			}
			at := day0.Add(time.Duration(i) * time.Second)
			d.exec(t, `INSERT INTO payment_attempts (id, session_id, attempt, idempotency_key, provider, mode, token, amount, currency,
				status, reference, decline_code, message, card_brand, card_last4, created_at, updated_at)
				VALUES (?, ?, ?, ?, 'stripe', 'test', '', 5210, 'usd', ?, ?, ?, '', 'visa', '0002', ?, ?)`,
				fmt.Sprintf("pa_%d", i), ord.CheckoutSessionID, i, fmt.Sprintf("k_%d", i), status, fmt.Sprintf("pi_%d", i), code, at, at)
		}
		var seen []int
		cursor := ""
		for page := 0; ; page++ {
			args := fmt.Sprintf(`{"order_id": %q, "attempts_cursor": %q}`, ord.ID, cursor)
			res, err := d.run(t, &readStaff, "get_order", args)
			if err != nil {
				t.Fatalf("page %d: %v", page, err)
			}
			got := res.Structured.(orders.OrderDetailResult).Order
			if got.PaymentAttemptsTotal != n || len(got.PaymentAttempts) > orders.AttemptsPage {
				t.Fatalf("page %d: %d attempts of %d; want at most %d of %d", page, len(got.PaymentAttempts), got.PaymentAttemptsTotal, orders.AttemptsPage, n)
			}
			if page == 0 {
				if first := got.PaymentAttempts; len(first) != orders.AttemptsPage || first[0].Attempt != n-orders.AttemptsPage+1 || first[len(first)-1].Attempt != n {
					t.Fatalf("first page: attempts %d to %d; want the newest %d, oldest first", first[0].Attempt, first[len(first)-1].Attempt, orders.AttemptsPage)
				}
				if size := len(res.Text); size > 8<<10 {
					t.Errorf("first page's text is %d bytes; want a page's worth", size)
				}
			}
			for i := len(got.PaymentAttempts) - 1; i >= 0; i-- {
				seen = append(seen, got.PaymentAttempts[i].Attempt)
			}
			if got.NextAttemptsCursor == "" {
				break
			}
			cursor = got.NextAttemptsCursor
			if page > n {
				t.Fatal("the cursors never end")
			}
		}
		if len(seen) != n {
			t.Fatalf("the pages gave %d attempts; want %d", len(seen), n)
		}
		for i, a := range seen {
			if a != n-i {
				t.Fatalf("attempt %d of the walk is %d; want %d (each once, newest first)", i, a, n-i)
			}
		}
		_, err := d.run(t, &readStaff, "get_order", fmt.Sprintf(`{"order_id": %q, "attempts_cursor": %q}`, other.ID, cursor))
		refusedAs(t, err, shop.Invalid, "$.attempts_cursor")
		_, err = d.run(t, &readStaff, "get_order", fmt.Sprintf(`{"order_id": %q, "attempts_cursor": "nonsense"}`, ord.ID))
		refusedAs(t, err, shop.Invalid, "$.attempts_cursor")
	})
}
