package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop/catalog"
	"shop/checkout"
	"shop/database/dbtest"
	"shop/orders"
	"shop/payments"
	"shop/server"
)

// payShop is the demo shop's sandbox payment pages over db.
type payShop struct {
	co     *checkout.Checkout
	policy *checkout.Policy
	db     *gorm.DB
	url    string
}

// readyMug is a session ready for payment: one mug, shipped to San
// Francisco.
func (p *payShop) readyMug(t *testing.T) *checkout.Session {
	t.Helper()
	return p.readyFor(t, context.Background())
}

// readyFor is readyMug made by the buyer of ctx.
func (p *payShop) readyFor(t *testing.T, ctx context.Context) *checkout.Session {
	t.Helper()
	s, err := p.co.Create(ctx, checkout.Request{
		Items:   &[]checkout.Item{{ID: "enamel-camp-mug-forest-green", Quantity: 1}},
		Address: &checkout.Address{Name: "Ada Lovelace", LineOne: "1 Market St", City: "San Francisco", State: "CA", Country: "US", PostalCode: "94105"},
		Buyer:   &checkout.Buyer{Name: "Ada Lovelace", Email: "ada@example.com"},
	})
	if err != nil || s.Status != checkout.Ready {
		t.Fatalf("create: %v %+v", err, s)
	}
	return s
}

func newPayShop(t *testing.T, db *gorm.DB) *payShop {
	t.Helper()
	return startPayShop(t, db, false)
}

// startPayShop serves the pay pages of a demo shop on the sandbox; with
// wallet, the sandbox keeps linked buyers' saved cards.
func startPayShop(t *testing.T, db *gorm.DB, wallet bool) *payShop {
	t.Helper()
	ctx := context.Background()
	policy, err := checkout.LoadPolicyFile(os.DirFS("../testdata/demo"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cat := catalog.New(db, policy.Currency(), nil)
	if _, err := cat.SeedIfEmpty(ctx, os.DirFS("../testdata/demo"), "catalog.json"); err != nil {
		t.Fatal(err)
	}
	key, err := orders.LoadReceiptKey(ctx, db, "")
	if err != nil {
		t.Fatal(err)
	}
	sandbox := payments.NewSandbox(db, nil)
	opts := &checkout.Options{Charger: sandbox, Orders: orders.New(db, &orders.Options{ReceiptKey: key})}
	if wallet {
		opts.Wallet = payments.NewWallet(db, sandbox)
	}
	co := checkout.New(db, policy, cat, opts)
	ts := httptest.NewServer(server.PayPages(co, server.PayOptions{Shop: "Demo"}))
	t.Cleanup(ts.Close)
	return &payShop{co: co, policy: policy, db: db, url: ts.URL}
}

// post posts the payment form of session id with the given fields, as the
// page's browser does.
func (p *payShop) post(t *testing.T, id string, form url.Values) (int, string) {
	t.Helper()
	form.Set("t", p.co.PayToken(id))
	req, err := http.NewRequest("POST", p.url+"/pay/"+id, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

func (p *payShop) count(t *testing.T, table string) int64 {
	t.Helper()
	var n int64
	if err := p.db.Table(table).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

var seenField = regexp.MustCompile(`name="seen" value="([^"]*)"`)

// seenOf is the signed "what you saw" of a page's form.
func seenOf(t *testing.T, body string) string {
	t.Helper()
	m := seenField.FindStringSubmatch(body)
	if m == nil || m[1] == "" {
		t.Fatalf("no seen field in the form:\n%s", body)
	}
	return m[1]
}

func sessionTotal(s *checkout.Session) int64 {
	for _, t := range s.Totals {
		if t.Type == checkout.TotalTotal {
			return t.Amount
		}
	}
	return -1
}

// TestPayPageChargesWhatItShowed: a session changed after its payment page
// was shown (more units, another address) is not charged when the old form
// is posted: a 409 page shows the new total with a new form, which pays. A
// decline in between does not change what the form agreed to.
func TestPayPageChargesWhatItShowed(t *testing.T) {
	ctx := context.Background()
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := newPayShop(t, db)
		s := p.readyMug(t)
		format := p.policy.Currency().Format
		res, body := get(t, p.url+"/pay/"+s.ID+"?t="+p.co.PayToken(s.ID))
		if res.StatusCode != http.StatusOK || !strings.Contains(body, "Pay "+format(sessionTotal(s))) {
			t.Fatalf("page: %d\n%s", res.StatusCode, body)
		}
		shown := seenOf(t, body)

		// The session changes after the page was shown.
		changed, err := p.co.Update(ctx, s.ID, checkout.Request{
			Items:   &[]checkout.Item{{ID: "enamel-camp-mug-forest-green", Quantity: 4}},
			Address: &checkout.Address{Name: "Ada Lovelace", LineOne: "350 Fifth Ave", City: "New York", State: "NY", Country: "US", PostalCode: "10118"},
		})
		if err != nil || changed.Status != checkout.Ready || sessionTotal(changed) == sessionTotal(s) {
			t.Fatalf("update: %v %+v", err, changed)
		}
		now := format(sessionTotal(changed))

		for _, tc := range []struct{ name, seen string }{{"OldForm", shown}, {"NoSeen", ""}, {"Forged", strings.Repeat("A", 43)}} {
			code, body := p.post(t, s.ID, url.Values{"card": {"pm_card_visa"}, "email": {"ada@example.com"}, "seen": {tc.seen}})
			if code != http.StatusConflict || !strings.Contains(body, `id="pay-error"`) || !strings.Contains(body, "its total is now "+now) || !strings.Contains(body, `id="pay-form"`) {
				t.Fatalf("%s: %d, want 409 with the new total %s:\n%s", tc.name, code, now, body)
			}
			if n := p.count(t, "sandbox_charges") + p.count(t, "payment_attempts"); n != 0 {
				t.Fatalf("%s: %d charges or attempts for a form of other figures", tc.name, n)
			}
			if seenOf(t, body) == shown {
				t.Fatalf("%s: the refusal's form carries the old figures", tc.name)
			}
		}
		_, body = get(t, p.url+"/pay/"+s.ID+"?t="+p.co.PayToken(s.ID))
		again := seenOf(t, body)

		code, _ := p.post(t, s.ID, url.Values{"card": {"pm_card_visa_chargeDeclined"}, "email": {"ada@example.com"}, "seen": {again}})
		if code != http.StatusPaymentRequired {
			t.Fatalf("decline: %d", code)
		}
		code, body = p.post(t, s.ID, url.Values{"card": {"pm_card_visa"}, "email": {"ada@example.com"}, "seen": {again}})
		if code != http.StatusSeeOther {
			t.Fatalf("paying the new form after a decline: %d\n%s", code, body)
		}
		done, err := p.co.Get(ctx, s.ID)
		if err != nil || done.Status != checkout.Completed || done.Order == nil {
			t.Fatalf("after paying: %v %+v", err, done)
		}
		var charged []int64
		if err := db.Table("sandbox_charges").Where("status = ?", "succeeded").Pluck("amount", &charged).Error; err != nil {
			t.Fatal(err)
		}
		if len(charged) != 1 || charged[0] != sessionTotal(changed) || done.Order.Receipt.Totals[len(done.Order.Receipt.Totals)-1].Amount != sessionTotal(changed) {
			t.Errorf("charged %v, order %+v; want one charge of %d", charged, done.Order.Receipt.Totals, sessionTotal(changed))
		}
	})
}

var cardOption = regexp.MustCompile(`name="card" value="(pm_card_\w+)"[^>]*> (\w+ ending (\d{4}): [^<]+)</label>`)

// TestPayPageCards: the page offers the sandbox's test cards, each with the
// card the sandbox then records for a payment with it.
func TestPayPageCards(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		p := newPayShop(t, db)
		s := p.readyMug(t)
		_, body := get(t, p.url+"/pay/"+s.ID+"?t="+p.co.PayToken(s.ID))
		var labels []string
		options := cardOption.FindAllStringSubmatch(body, -1)
		for _, o := range options {
			labels = append(labels, o[2])
		}
		want := []string{
			"Visa ending 4242: succeeds",
			"Visa ending 0002: declined",
			"Visa ending 9995: declined, insufficient funds",
			"Visa ending 3184: needs the bank&#39;s confirmation (3D Secure)",
		}
		if diff := cmp.Diff(want, labels); diff != "" {
			t.Fatalf("cards offered (-want +got):\n%s\n%s", diff, body)
		}
		// The paying card last, so that the session stays ready for the others.
		for i := len(options) - 1; i >= 0; i-- {
			o := options[i]
			p.post(t, s.ID, url.Values{"card": {o[1]}, "email": {"ada@example.com"}, "seen": {seenOf(t, body)}})
			var last4 string
			if err := db.Table("sandbox_charges").Order("created_at DESC").Limit(1).Pluck("card_last4", &last4).Error; err != nil {
				t.Fatal(err)
			}
			if last4 != o[3] {
				t.Errorf("%s: the page says ending %s, the sandbox charged the card ending %s", o[1], o[3], last4)
			}
		}
	})
}
