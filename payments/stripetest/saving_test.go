package stripetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"shop"
	"shop/payments"
	"shop/payments/stripetest"
)

// TestCheckoutSavesCard: a Checkout Session made for a customer with
// saved_payment_method_options[payment_method_save]=enabled, paid with the
// box ticked, leaves its PaymentIntent with setup_future_usage=off_session
// and the customer, and the card attached to the customer (listed, and
// chargeable off-session); paid without, nothing is attached. What Stripe
// refuses is refused.
func TestCheckoutSavesCard(t *testing.T) {
	srv := stripetest.New(t)
	p := srv.Stripe(payments.StripeOptions{Retries: -1})
	ctx := context.Background()
	status, body := call(t, srv, http.MethodPost, "/v1/customers", url.Values{"metadata[account_id]": {"ada"}}, "")
	var cust struct{ ID string }
	if err := json.Unmarshal([]byte(body), &cust); err != nil || status != http.StatusOK || !strings.HasPrefix(cust.ID, "cus_") {
		t.Fatalf("customer: %d %s", status, body)
	}

	saving := page("k_saving")
	saving.Customer = cust.ID
	hc, err := p.CreateHostedCheckout(ctx, saving)
	if err != nil {
		t.Fatal(err)
	}
	pi := srv.PaySaving(hc.ID)
	got, err := p.HostedCheckout(ctx, hc.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := got.SavedCard
	if !got.Paid || got.PaymentIntent != pi || c == nil || c.Customer != cust.ID || !strings.HasPrefix(c.ID, "pm_1") ||
		c.Brand != "visa" || c.Last4 != "4242" || c.ExpMonth != 12 || c.ExpYear != 2034 {
		t.Fatalf("paid saving the card: %+v, saved %+v", got, c)
	}
	status, body = call(t, srv, http.MethodGet, "/v1/customers/"+cust.ID+"/payment_methods", nil, "")
	var list struct {
		Data []struct {
			ID             string `json:"id"`
			Customer       string `json:"customer"`
			AllowRedisplay string `json:"allow_redisplay"`
		}
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || status != http.StatusOK || len(list.Data) != 1 ||
		list.Data[0].ID != c.ID || list.Data[0].Customer != cust.ID || list.Data[0].AllowRedisplay != "always" {
		t.Fatalf("the customer's payment methods: %d %s", status, body)
	}
	res, err := p.Charge(ctx, payments.Request{Amount: 1500, Currency: "usd", Token: c.ID, Customer: cust.ID, IdempotencyKey: "k_off_session"})
	if err != nil || res.Status != payments.Succeeded {
		t.Fatalf("off-session charge of the saved card: %+v, %v", res, err)
	}

	unticked := page("k_unticked")
	unticked.Customer = cust.ID
	hc, err = p.CreateHostedCheckout(ctx, unticked)
	if err != nil {
		t.Fatal(err)
	}
	srv.Pay(hc.ID)
	if got, err := p.HostedCheckout(ctx, hc.ID); err != nil || !got.Paid || got.SavedCard != nil {
		t.Errorf("paid without ticking the box: %+v, %v; want nothing saved", got, err)
	}
	if n := len(srv.SavedMethods()); n != 1 {
		t.Errorf("%d payment methods attached; want only the one saved", n)
	}

	form := func(edit func(url.Values)) url.Values {
		f := url.Values{
			"mode": {"payment"}, "success_url": {"https://shop.example/ok"},
			"line_items[0][quantity]": {"1"}, "line_items[0][price_data][currency]": {"usd"},
			"line_items[0][price_data][unit_amount]": {"500"}, "line_items[0][price_data][product_data][name]": {"Mug"},
		}
		edit(f)
		return f
	}
	for _, tt := range []struct {
		name  string
		edit  func(url.Values)
		param string
	}{
		{"customer and customer_email", func(f url.Values) { f.Set("customer", cust.ID); f.Set("customer_email", "ada@example.com") }, "customer"},
		{"unknown customer", func(f url.Values) { f.Set("customer", "cus_nope") }, "customer"},
		{"save without a customer", func(f url.Values) { f.Set("saved_payment_method_options[payment_method_save]", "enabled") },
			"saved_payment_method_options[payment_method_save]"},
		{"save neither enabled nor disabled", func(f url.Values) {
			f.Set("customer", cust.ID)
			f.Set("saved_payment_method_options[payment_method_save]", "yes")
		}, "saved_payment_method_options[payment_method_save]"},
	} {
		status, body := call(t, srv, http.MethodPost, "/v1/checkout/sessions", form(tt.edit), "")
		var e struct{ Error struct{ Param, Type string } }
		if err := json.Unmarshal([]byte(body), &e); err != nil || status != http.StatusBadRequest || e.Error.Param != tt.param ||
			e.Error.Type != "invalid_request_error" {
			t.Errorf("%s: %d %s; want a 400 naming %s", tt.name, status, body, tt.param)
		}
	}
}

// TestDeleteCustomer: DELETE /v1/customers/{id} answers as Stripe does and
// detaches the customer's payment methods; later requests naming the
// deleted customer (delete again, attach, list, charge off-session) answer
// resource_missing.
func TestDeleteCustomer(t *testing.T) {
	srv := stripetest.New(t)
	p := srv.Stripe(payments.StripeOptions{Retries: -1})
	_, body := call(t, srv, http.MethodPost, "/v1/customers", url.Values{"metadata[account_id]": {"ada"}}, "")
	var cust struct{ ID string }
	if err := json.Unmarshal([]byte(body), &cust); err != nil {
		t.Fatal(err)
	}
	status, body := call(t, srv, http.MethodPost, "/v1/payment_methods/pm_card_visa/attach", url.Values{"customer": {cust.ID}}, "")
	var pm struct{ ID string }
	if err := json.Unmarshal([]byte(body), &pm); err != nil || status != http.StatusOK {
		t.Fatalf("attach: %d %s", status, body)
	}

	status, body = call(t, srv, http.MethodDelete, "/v1/customers/"+cust.ID, nil, "")
	var del struct {
		ID, Object string
		Deleted    bool
	}
	if err := json.Unmarshal([]byte(body), &del); err != nil || status != http.StatusOK || del.ID != cust.ID || del.Object != "customer" || !del.Deleted {
		t.Fatalf("delete: %d %s; want the id and deleted: true", status, body)
	}
	if m := srv.SavedMethods(); len(m) != 1 || m[0].ID != pm.ID || m[0].Customer != "" {
		t.Errorf("after deleting the customer, methods %+v; want its card detached", m)
	}

	missing := func(what string, status int, body string, want int) {
		t.Helper()
		var e struct{ Error struct{ Code, Type string } }
		if err := json.Unmarshal([]byte(body), &e); err != nil || status != want || e.Error.Code != "resource_missing" {
			t.Errorf("%s: %d %s; want %d resource_missing", what, status, body, want)
		}
	}
	status, body = call(t, srv, http.MethodDelete, "/v1/customers/"+cust.ID, nil, "")
	missing("delete again", status, body, http.StatusNotFound)
	status, body = call(t, srv, http.MethodPost, "/v1/payment_methods/pm_card_visa/attach", url.Values{"customer": {cust.ID}}, "")
	missing("attach", status, body, http.StatusBadRequest)
	status, body = call(t, srv, http.MethodGet, "/v1/customers/"+cust.ID+"/payment_methods", nil, "")
	missing("list", status, body, http.StatusNotFound)
	status, body = call(t, srv, http.MethodPost, "/v1/payment_intents", url.Values{"amount": {"1500"}, "currency": {"usd"},
		"customer": {cust.ID}, "payment_method": {pm.ID}, "off_session": {"true"}, "confirm": {"true"}}, "k_deleted")
	missing("charge off-session", status, body, http.StatusBadRequest)
	// The shop's Charge refuses the saved card by name.
	_, err := p.Charge(context.Background(), payments.Request{Amount: 1500, Currency: "usd", Token: pm.ID, Customer: cust.ID, IdempotencyKey: "k_shop"})
	if e := (*shop.Error)(nil); !errors.As(err, &e) || e.Param != "$.payment_data.token" {
		t.Errorf("Charge through a deleted customer: %v; want a refusal of $.payment_data.token", err)
	}
}
