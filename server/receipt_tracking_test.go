package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"shop"
	"shop/orders"
)

// TestReceiptPageTracking: the receipt page shows no tracking before the
// staff ship, and each parcel's carrier and tracking link after.
func TestReceiptPageTracking(t *testing.T) {
	ts, o, ord := receiptShop(t)
	page := ts.URL + "/orders/" + ord.ID + "?t=" + strings.SplitN(ord.PermalinkURL, "?t=", 2)[1]
	if _, body := get(t, page); strings.Contains(body, `id="tracking"`) {
		t.Fatalf("the page of an order not shipped shows tracking:\n%s", body)
	}
	var fulfil shop.Tool
	for _, tl := range orders.NewAdmin(o, nil, nil).Tools() {
		if tl.Name == "fulfill_order" {
			fulfil = tl
		}
	}
	ctx := shop.WithActor(context.Background(), shop.Actor{Role: shop.Support, Label: "t"})
	for _, args := range []map[string]any{
		{"order_id": ord.ID, "carrier": "UPS", "tracking_number": "1Z999", "tracking_url": "https://ups.example/t?n=1Z999&x=<b>",
			"lines": []map[string]any{{"line_id": "li_1", "quantity": 2}}},
		{"order_id": ord.ID, "carrier": "DHL", "tracking_number": "JD0142"},
	} {
		raw, _ := json.Marshal(args)
		if _, err := fulfil.Handle(ctx, raw); err != nil {
			t.Fatal(err)
		}
	}
	_, body := get(t, page)
	for _, s := range []string{`<h2 id="tracking">Tracking</h2>`, "Shipped 1 October 2025 with UPS: ",
		`<a href="https://ups.example/t?n=1Z999&amp;x=%3cb%3e" rel="noreferrer">1Z999</a>`, "with DHL: JD0142</li>"} {
		if !strings.Contains(body, s) {
			t.Errorf("the page lacks %q:\n%s", s, body)
		}
	}
}
