package orders_test

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/checkout"
	"shop/contract"
	"shop/database/dbtest"
	"shop/money"
	"shop/notify"
	"shop/notify/smtptest"
	"shop/orders"
)

// mailShop is the staff's shop whose orders email their buyers, delivered
// by notify's worker to a real SMTP server on 127.0.0.1.
type mailShop struct {
	*staffShop
	smtp   *smtptest.Server
	worker *notify.Worker
}

func newMailShop(t *testing.T, db *gorm.DB) *mailShop {
	t.Helper()
	s := &mailShop{smtp: smtptest.Start(t)}
	s.staffShop = newStaffShopWith(t, db, nil, nil, &orders.Emails{
		Shop: "Northwind Goods", Support: "help@northwind.example", StaffCopy: "orders@northwind.example",
		Logger: slog.New(slog.DiscardHandler),
	})
	sender, err := notify.ParseSMTPURL(s.smtp.URL)
	if err != nil {
		t.Fatal(err)
	}
	s.worker = notify.NewWorker(db, sender, "Northwind Goods <shop@northwind.example>", &notify.WorkerOptions{Now: s.later, Logger: slog.New(slog.DiscardHandler)})
	return s
}

// later is the later of the shop's clock (the staff's changes) and the
// real one (checkout's transactions).
func (s *mailShop) later() time.Time {
	if now := time.Now(); now.After(s.clock()) {
		return now
	}
	return s.clock()
}

// deliver runs the worker once and returns the messages the server has, parsed.
func (s *mailShop) deliver(t *testing.T) []*smtptest.Parsed {
	t.Helper()
	if _, err := s.worker.Deliver(context.Background()); err != nil {
		t.Fatal(err)
	}
	var out []*smtptest.Parsed
	for _, m := range s.smtp.Messages() {
		p, err := m.Parse()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func (s *mailShop) buy(t *testing.T, name string, n int64) *contract.Order {
	t.Helper()
	return s.buyIn(t, "", name, n)
}

// buyIn places an order of n mugs for a buyer named name whose host
// speaks locale ("" for none).
func (s *mailShop) buyIn(t *testing.T, locale, name string, n int64) *contract.Order {
	t.Helper()
	ctx := shop.WithLocale(context.Background(), locale)
	cs, err := s.co.Create(ctx, checkout.Request{
		Items:   &[]checkout.Item{{ID: "enamel-camp-mug-cream", Quantity: n}},
		Address: &checkout.Address{Name: "Ada Lovelace", LineOne: "1 Market St", City: "San Francisco", State: "CA", Country: "US", PostalCode: "94105"},
		Buyer:   &checkout.Buyer{Name: name, Email: "ada@example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	done, err := s.co.Complete(ctx, checkout.CompleteRequest{SessionID: cs.ID, Payment: checkout.PaymentData{Token: "pm_card_visa", Provider: "stripe"}})
	if err != nil || done.Order == nil {
		t.Fatalf("pay: %v %+v", err, done)
	}
	return done.Order
}

func contains(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s does not say %q:\n%s", what, w, body)
		}
	}
}

func TestOrderEmails(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newMailShop(t, db)
		ord := s.buy(t, `<script>alert("x")</script> Ada`, 2)
		got := s.deliver(t)
		if len(got) != 2 {
			t.Fatalf("%d messages after an order, want the confirmation and the staff's copy", len(got))
		}
		buyer, staff := got[0], got[1]
		if buyer.Header.Get("To") != "<ada@example.com>" {
			buyer, staff = staff, buyer
		}
		rec := ord.Receipt
		format := moneyText
		for _, h := range []struct{ k, want string }{
			{"Subject", "Northwind Goods: your order " + itoa(ord.Number) + " is confirmed"},
			{"Reply-To", "<help@northwind.example>"},
			{"From", `"Northwind Goods" <shop@northwind.example>`},
		} {
			if g := buyer.Header.Get(h.k); g != h.want {
				t.Errorf("confirmation %s: %q, want %q", h.k, g, h.want)
			}
		}
		text, html := buyer.Parts["text/plain"], buyer.Parts["text/html"]
		li := rec.LineItems[0]
		var figures []string // as the session displayed them: a Californian's, tax its own line
		for _, row := range rec.Display.Rows(rec.LineItems, rec.Totals) {
			figures = append(figures, rec.Display.EnglishLabel(row.Type)+": "+format(row.Amount))
		}
		if len(figures) < 4 || !slices.ContainsFunc(figures, func(f string) bool { return strings.HasPrefix(f, "Sales tax: ") }) {
			t.Fatalf("figures %v", figures)
		}
		contains(t, "the confirmation's text", text, append(figures,
			"2 × "+li.Name+" ("+format(li.UnitAmount)+" each): "+format(li.Subtotal),
			ord.PermalinkURL, "1 Market St", "San Francisco, CA 94105", rec.FulfillmentOption.Title,
			"Returns: ", "help@northwind.example", `<script>alert("x")</script> Ada`)...)
		contains(t, "the confirmation's HTML", html, format(li.Subtotal), "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; Ada",
			strings.ReplaceAll(ord.PermalinkURL, "&", "&amp;"))
		if strings.Contains(html, "<script") {
			t.Errorf("the HTML part carries the buyer's <script>:\n%s", html)
		}
		if staff.Header.Get("To") != "<orders@northwind.example>" || staff.Header.Get("Reply-To") != "<ada@example.com>" {
			t.Errorf("staff copy to %q, reply-to %q", staff.Header.Get("To"), staff.Header.Get("Reply-To"))
		}

		s.notices(t, ord)
	})
}

// notices ships a parcel of ord and refunds part of it, and checks each
// sends its email, and that staff see all four of the order's emails.
func (s *mailShop) notices(t *testing.T, ord *contract.Order) {
	t.Helper()
	li, format := ord.Receipt.LineItems[0], moneyText
	// A parcel, then a refund of part: one email each.
	s.advance(time.Minute)
	line := li.ID
	if _, err := s.call(t, support, "fulfill_order", map[string]any{"order_id": ord.ID, "carrier": "USPS", "tracking_number": "9400-1",
		"tracking_url": "https://tools.usps.com/go/TrackConfirmAction?tLabels=9400-1", "lines": []map[string]any{{"line_id": line, "quantity": 1}}}); err != nil {
		t.Fatal(err)
	}
	s.advance(time.Minute)
	if _, err := s.twoStep(t, owner, "refund_order", map[string]any{"order_id": ord.ID, "amount": 500, "reason": "dented"}); err != nil {
		t.Fatal(err)
	}
	got := s.deliver(t)
	if len(got) != 4 {
		t.Fatalf("%d messages, want 4", len(got))
	}
	shipped, refunded := got[2], got[3]
	if !strings.Contains(shipped.Header.Get("Subject"), "has shipped") {
		shipped, refunded = refunded, shipped
	}
	contains(t, "the shipping notice", shipped.Parts["text/plain"], "with USPS", "Tracking number: 9400-1",
		"https://tools.usps.com/go/TrackConfirmAction?tLabels=9400-1", "  1 × "+li.Name)
	contains(t, "the shipping notice's HTML", shipped.Parts["text/html"], `href="https://tools.usps.com/go/TrackConfirmAction?tLabels=9400-1"`)
	contains(t, "the refund notice", refunded.Parts["text/plain"], "refunded $5.00", format(paid(ord)-500)+" of the order remains paid")
	if subj := refunded.Header.Get("Subject"); subj != "Northwind Goods: $5.00 refunded on your order "+itoa(ord.Number) {
		t.Errorf("refund subject %q", subj)
	}

	// Staff see each email and where it stands.
	out, err := s.call(t, viewer, "get_order", map[string]any{"order_id": ord.ID})
	if err != nil {
		t.Fatal(err)
	}
	emails, _ := out["order"].(map[string]any)["emails"].([]any)
	var kinds []string
	for _, e := range emails {
		m := e.(map[string]any)
		kinds = append(kinds, m["kind"].(string)+":"+m["status"].(string))
	}
	if strings.Join(kinds, ",") != "confirmation:sent,staff_copy:sent,shipped:sent,refunded:sent" {
		t.Errorf("get_order's emails: %v", kinds)
	}
}

func TestCancelEmail(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		s := newMailShop(t, db)
		ord := s.buy(t, "Ada", 1)
		if _, err := s.twoStep(t, owner, "cancel_order", map[string]any{"order_id": ord.ID, "reason": "buyer asked"}); err != nil {
			t.Fatal(err)
		}
		got := s.deliver(t)
		subjects := map[string]*smtptest.Parsed{}
		for _, p := range got {
			subjects[p.Header.Get("Subject")] = p
		}
		n := itoa(ord.Number)
		canceled := subjects["Northwind Goods: your order "+n+" is canceled"]
		if len(got) != 4 || canceled == nil || subjects["Northwind Goods: "+moneyText(paid(ord))+" refunded on your order "+n] == nil {
			t.Fatalf("after a cancel with refund: %v", subjects)
		}
		contains(t, "the cancel notice", canceled.Parts["text/plain"], "is canceled", "A refund of "+moneyText(paid(ord)))
	})
}

// Without Emails, orders write nothing to the outbox.
func TestNoEmails(t *testing.T) {
	db := dbtest.Open(t, "sqlite")
	s := newStaffShop(t, db)
	s.order(t, 1)
	b, err := notify.Stand(context.Background(), db)
	if err != nil || b != (notify.Backlog{}) {
		t.Fatalf("outbox %+v, %v", b, err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// moneyText is how buyers read an amount of the demo shop's dollars.
func moneyText(a int64) string {
	usd, err := money.Lookup("usd")
	if err != nil {
		panic(err)
	}
	return usd.Format(a)
}
