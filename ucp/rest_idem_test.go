package ucp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop"
	"shop/database/dbtest"
	"shop/idempotency"
)

// TestRESTKeysBudget: a REST state change with a new Idempotency-Key from
// an address that has claimed its keys for the hour is refused with 429
// too_many_requests and a Retry-After up to the next hour, before the
// operation runs; nothing of it is stored. On SQLite and PostgreSQL.
func TestRESTKeysBudget(t *testing.T) {
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"ucp": {"version": %q, "capabilities": {"dev.ucp.shopping.checkout": [{"version": %q}]}}}`, Version, Version)
	}))
	defer agent.Close()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		store := idempotency.New(db).WithKeysPerHour(1)
		ctx := shop.WithBuyer(context.Background(), shop.Buyer{Address: "203.0.113.7"})
		spent := idempotency.Request{Scope: "earlier", Key: "k", Fingerprint: []byte{1}, Budget: budget(ctx)}
		if _, err := store.Do(ctx, spent, func(context.Context) ([]byte, bool, error) { return []byte("{}"), true, nil }); err != nil {
			t.Fatal(err)
		}
		u := New(Options{AllowLoopbackProfiles: true, Idempotency: store})
		r := httptest.NewRequestWithContext(ctx, "PUT", RESTPath+"/checkout-sessions/cs_x", strings.NewReader(`{}`))
		r.Header.Set("UCP-Agent", `profile="`+agent.URL+`/agent.json"`)
		r.Header.Set("Idempotency-Key", "550e8400-e29b-41d4-a716-446655440000")
		w := httptest.NewRecorder()
		u.REST().ServeHTTP(w, r) // the operation would panic: the dialect has no checkout
		wait, _ := strconv.Atoi(w.Header().Get("Retry-After"))
		if w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), "too_many_requests") || wait < 1 || wait > 3601 {
			t.Errorf("a new key past the budget: HTTP %d, Retry-After %q, %s", w.Code, w.Header().Get("Retry-After"), w.Body)
		}
		var keys int64
		if err := db.Table("idempotency_keys").Count(&keys).Error; err != nil || keys != 1 {
			t.Errorf("%d keys stored (%v), want the earlier one alone", keys, err)
		}
	})
}

// TestRESTRecord: what an Idempotency-Key keeps is read from the typed
// outcome: the id of a final checkout or cart, a small error response
// whole, nothing for what a retry may answer otherwise (a checkout still
// being paid, a conflict, the shop unavailable) or an error response too
// large to keep.
func TestRESTRecord(t *testing.T) {
	conflict := failed(&ErrorResponse{Messages: []Message{{Type: "error", Code: string(shop.Conflict)}}})
	notFound := failed(&ErrorResponse{Messages: []Message{{Type: "error", Code: string(shop.NotFound)}}})
	for _, tc := range []struct {
		name string
		o    outcome
		size int
		want restRecord
		keep bool
	}{
		{"a checkout made", ofCheckout(CheckoutResult{Checkout: &Checkout{ID: "cs_1", Status: "ready_for_complete"}}), 100, restRecord{Status: 201, ID: "cs_1"}, true},
		{"a checkout being paid", ofCheckout(CheckoutResult{Checkout: &Checkout{ID: "cs_1", Status: "complete_in_progress"}}), 100, restRecord{}, false},
		{"a checkout with a conflict", ofCheckout(CheckoutResult{Checkout: &Checkout{ID: "cs_1", Status: "incomplete",
			Messages: []Message{{Type: "error", Code: "unavailable"}}}}), 100, restRecord{}, false},
		{"a cart", ofCart(CartResult{Cart: &Cart{ID: "cart_1"}}), 100, restRecord{Status: 201, ID: "cart_1"}, true},
		{"a conflict", conflict, 100, restRecord{}, false},
		{"an error response", notFound, 100, restRecord{Status: 201, Body: make([]byte, 100)}, true},
		{"a large error response", notFound, maxKeptAnswer + 1, restRecord{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := restAnswer{outcome: tc.o, status: 201, body: make([]byte, tc.size)}
			got, keep := a.record(true)
			if keep != tc.keep || got.Status != tc.want.Status || got.ID != tc.want.ID || len(got.Body) != len(tc.want.Body) {
				t.Errorf("record = %+v, %v; want %+v, %v", got, keep, tc.want, tc.keep)
			}
		})
	}
}
