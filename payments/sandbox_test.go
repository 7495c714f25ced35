package payments_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gorm.io/gorm"

	"shop"
	"shop/database/dbtest"
	"shop/payments"
)

var fixedNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func newSandbox(db *gorm.DB) *payments.Sandbox {
	return payments.NewSandbox(db, &payments.SandboxOptions{Now: func() time.Time { return fixedNow }})
}

func charge(token, key string) payments.Request {
	return payments.Request{
		Amount: 2599, Currency: "usd", Token: token, IdempotencyKey: key,
		Description: "Checkout cs_test", Metadata: map[string]string{"checkout_session_id": "cs_test"},
	}
}

func count(t *testing.T, db *gorm.DB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.Table(table).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

var ignoreReference = cmpopts.IgnoreFields(payments.Result{}, "Reference", "Amount", "Currency", "Refunded", "Metadata")

func TestSandboxCharge(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		sb := newSandbox(db)
		if sb.Name() != "sandbox" || sb.Mode() != payments.ModeTest {
			t.Errorf("Name, Mode = %q, %q; want sandbox, test", sb.Name(), sb.Mode())
		}
		tests := []struct {
			token string
			want  payments.Result
		}{
			// The card is the one behind Stripe's test payment method, kept
			// with the charge (Lookup answers it from the database).
			{"pm_card_visa", payments.Result{Status: payments.Succeeded, Simulated: true, CardBrand: "visa", CardLast4: "4242"}},
			{"pm_card_mastercard", payments.Result{Status: payments.Succeeded, Simulated: true, CardBrand: "mastercard", CardLast4: "4444"}},
			{"pm_card_amex", payments.Result{Status: payments.Succeeded, Simulated: true, CardBrand: "amex", CardLast4: "8431"}},
			{"pm_card_visa_debit", payments.Result{Status: payments.Succeeded, Simulated: true, CardBrand: "visa", CardLast4: "5556"}},
			// A shared payment token's card is not the sandbox's to know.
			{"spt_1RgaZcB7WZ01zgkWN1pyM2rT", payments.Result{Status: payments.Succeeded, Simulated: true}},
			{"pm_card_visa_chargeDeclined", payments.Result{Status: payments.Declined, DeclineCode: "card_declined",
				Message: "Your card was declined.", Simulated: true, CardBrand: "visa", CardLast4: "0002"}},
			{"pm_card_chargeDeclinedInsufficientFunds", payments.Result{Status: payments.Declined, DeclineCode: "insufficient_funds",
				Message: "Your card has insufficient funds.", Simulated: true, CardBrand: "visa", CardLast4: "9995"}},
			{"pm_card_authenticationRequired", payments.Result{Status: payments.RequiresAction, DeclineCode: "authentication_required",
				Message: "Your bank needs you to confirm this payment.", Simulated: true, CardBrand: "visa", CardLast4: "3184"}},
		}
		for _, tt := range tests {
			t.Run(tt.token, func(t *testing.T) {
				got, err := sb.Charge(ctx, charge(tt.token, "key_"+tt.token))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, *got, ignoreReference); diff != "" {
					t.Errorf("Charge(%s) (-want +got):\n%s", tt.token, diff)
				}
				if !strings.HasPrefix(got.Reference, "pi_sandbox_") {
					t.Errorf("Reference %q, want pi_sandbox_…", got.Reference)
				}
				looked, found, err := sb.Lookup(ctx, "key_"+tt.token)
				if err != nil || !found {
					t.Fatalf("Lookup: %v, found %v", err, found)
				}
				if diff := cmp.Diff(got, looked); diff != "" {
					t.Errorf("Lookup (-charged +looked up):\n%s", diff)
				}
			})
		}
		t.Run("refused tokens", func(t *testing.T) {
			for _, token := range []string{"pm_card_unknown", "tok_visa", "4242424242424242", "spt_", "pm_", ""} {
				_, err := sb.Charge(ctx, charge(token, "key_refused"))
				var e *shop.Error
				if !errors.As(err, &e) || e.Code != shop.Invalid || e.Param != "$.payment_data.token" {
					t.Errorf("Charge(%q) = %v, want a shop.Error invalid $.payment_data.token", token, err)
				}
			}
			if _, found, err := sb.Lookup(ctx, "key_refused"); err != nil || found {
				t.Errorf("Lookup after refused tokens: found %v, %v; want nothing recorded", found, err)
			}
		})
	})
}

func TestSandboxIdempotency(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		sb := newSandbox(db)
		first, err := sb.Charge(ctx, charge("pm_card_visa", "k1"))
		if err != nil {
			t.Fatal(err)
		}
		again, err := sb.Charge(ctx, charge("pm_card_visa", "k1"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, again); diff != "" {
			t.Errorf("replay (-first +again):\n%s", diff)
		}
		if n := count(t, db, "sandbox_charges"); n != 1 {
			t.Errorf("%d rows after a replay, want 1", n)
		}
		// A decline is replayed as well: a retry does not turn it into a success.
		d1, _ := sb.Charge(ctx, charge("pm_card_visa_chargeDeclined", "k2"))
		d2, _ := sb.Charge(ctx, charge("pm_card_visa_chargeDeclined", "k2"))
		if diff := cmp.Diff(d1, d2); diff != "" || d1.Status != payments.Declined {
			t.Errorf("declined replay %+v (-first +again):\n%s", d1, diff)
		}

		mismatched := map[string]payments.Request{}
		r := charge("pm_card_visa", "k1")
		r.Amount++
		mismatched["amount"] = r
		r = charge("pm_card_visa", "k1")
		r.Currency = "eur"
		mismatched["currency"] = r
		r = charge("pm_card_mastercard", "k1")
		mismatched["token"] = r
		for name, r := range mismatched {
			if _, err := sb.Charge(ctx, r); !errors.Is(err, payments.ErrKeyReused) {
				t.Errorf("same key, other %s: %v, want ErrKeyReused", name, err)
			}
		}
		_, err = sb.Charge(ctx, charge("pm_card_visa", "k1")) // the key still answers its first request
		if err != nil {
			t.Errorf("replay after refused reuses: %v", err)
		}
		if n := count(t, db, "sandbox_charges"); n != 2 {
			t.Errorf("%d rows, want 2", n)
		}
	})
}

// TestSandboxConcurrentCharges: 32 callers racing with one key make one row
// and all get the same answer.
func TestSandboxConcurrentCharges(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		sb := newSandbox(db)
		const n = 32
		results := make([]*payments.Result, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				results[i], errs[i] = sb.Charge(ctx, charge("pm_card_visa", "race"))
			})
		}
		close(start)
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("caller %d: %v", i, errs[i])
			}
			if diff := cmp.Diff(results[0], results[i]); diff != "" {
				t.Errorf("caller %d (-caller 0 +caller %d):\n%s", i, i, diff)
			}
		}
		if c := count(t, db, "sandbox_charges"); c != 1 {
			t.Errorf("%d rows, want 1", c)
		}
	})
}

func TestSandboxRefund(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		sb := newSandbox(db)
		paid, err := sb.Charge(ctx, charge("pm_card_visa", "pay")) // 2599
		if err != nil {
			t.Fatal(err)
		}
		declined, err := sb.Charge(ctx, charge("pm_card_visa_chargeDeclined", "pay_declined"))
		if err != nil {
			t.Fatal(err)
		}
		refund := func(key string, amount int64) payments.RefundRequest {
			return payments.RefundRequest{Reference: paid.Reference, Amount: amount, IdempotencyKey: key, Reason: "requested_by_customer"}
		}
		var refs []string
		steps := []struct {
			name     string
			req      payments.RefundRequest
			want     int64     // amount refunded, when it succeeds
			wantCode shop.Code // else the shop.Error's code
			reused   bool      // else ErrKeyReused
		}{
			{name: "partial", req: refund("r1", 1000), want: 1000},
			{name: "partial replayed", req: refund("r1", 1000), want: 1000},
			{name: "key reused for another amount", req: refund("r1", 999), reused: true},
			{name: "more than is left", req: refund("r2", 1600), wantCode: shop.Invalid},
			{name: "zero", req: refund("r3", 0), wantCode: shop.Invalid},
			{name: "the rest", req: refund("r4", 1599), want: 1599},
			{name: "the rest replayed", req: refund("r4", 1599), want: 1599},
			{name: "fully refunded already", req: refund("r5", 1), wantCode: shop.Invalid},
			{name: "declined charge", req: payments.RefundRequest{Reference: declined.Reference, Amount: 1, IdempotencyKey: "r6"}, wantCode: shop.Invalid},
			{name: "unknown charge", req: payments.RefundRequest{Reference: "pi_sandbox_nope", Amount: 1, IdempotencyKey: "r7"}, wantCode: shop.NotFound},
		}
		for _, st := range steps {
			got, err := sb.Refund(ctx, st.req)
			switch {
			case st.reused:
				if !errors.Is(err, payments.ErrKeyReused) {
					t.Errorf("%s: %v, want ErrKeyReused", st.name, err)
				}
			case st.wantCode != "":
				if code := shop.ErrorCode(err); code != st.wantCode {
					t.Errorf("%s: %v (code %q), want a shop.Error %q", st.name, err, code, st.wantCode)
				}
				var e *shop.Error
				if st.wantCode == shop.Invalid && st.name != "declined charge" && (!errors.As(err, &e) || e.Param != "$.amount") {
					t.Errorf("%s: %v, want param $.amount", st.name, err)
				}
			case err != nil:
				t.Errorf("%s: %v", st.name, err)
			default:
				want := payments.Refund{Amount: st.want, Status: "succeeded", Simulated: true}
				if diff := cmp.Diff(want, *got, cmpopts.IgnoreFields(payments.Refund{}, "Reference")); diff != "" {
					t.Errorf("%s (-want +got):\n%s", st.name, diff)
				}
				refs = append(refs, got.Reference)
			}
		}
		if len(refs) != 4 || refs[0] != refs[1] || refs[2] != refs[3] || refs[0] == refs[2] {
			t.Errorf("refund references %v: want 2 distinct, each replayed", refs)
		}
		if n := count(t, db, "sandbox_refunds"); n != 2 {
			t.Errorf("%d refund rows, want 2", n)
		}
	})
}

// TestSandboxConcurrentRefunds: refunds racing on one charge never add up
// to more than it; racing replays of one key make one refund.
func TestSandboxConcurrentRefunds(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		sb := newSandbox(db)
		r := charge("pm_card_visa", "pay")
		r.Amount = 1000
		paid, err := sb.Charge(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		const n = 16
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				key := fmt.Sprintf("r%d", i%12) // keys r0…r3 are sent twice
				_, errs[i] = sb.Refund(ctx, payments.RefundRequest{Reference: paid.Reference, Amount: 200, IdempotencyKey: key})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil && shop.ErrorCode(err) != shop.Invalid {
				t.Errorf("refund %d: %v", i, err)
			}
		}
		var sum int64
		if err := db.Table("sandbox_refunds").Select("COALESCE(SUM(amount), 0)").Scan(&sum).Error; err != nil {
			t.Fatal(err)
		}
		if sum != 1000 || count(t, db, "sandbox_refunds") != 5 {
			t.Errorf("refunded %d in %d rows, want 1000 in 5", sum, count(t, db, "sandbox_refunds"))
		}
	})
}
