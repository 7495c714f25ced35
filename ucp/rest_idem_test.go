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
