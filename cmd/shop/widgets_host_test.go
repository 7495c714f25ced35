package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"shop/checkout"
	"shop/widgets"
)

// Hosts as they come (issue 17): a host that speaks only window.openai, as
// ChatGPT injects it, with no MCP Apps bridge; and a conversation revisited
// later, whose host re-mounts the checkout widget with the output it kept.
// These run as cases of TestWidgets (its shop and browser).

// testOpenAIOnly: in a host with window.openai alone the widgets read their
// output from toolOutput, call tools with callTool, open links with
// openExternal and pay on requestCheckout's sheet.
func testOpenAIOnly(t *testing.T, p *page) {
	ids := p.search("mug", 3)
	m := p.load(loadOptions{URI: widgets.ProductsURI, Tool: "render_products", Args: map[string]any{"product_ids": ids}, OpenAIOnly: true})
	logRender(t, "products", "with window.openai alone", m)
	p.shot("products")
	card := fmt.Sprintf(`article[data-product=%q]`, ids[2])
	p.in(chromedp.Click(chromedp.CSS(card + ` button.primary`)))
	p.waitFor("the added status", `document.querySelector(".status").innerText.startsWith("Added 1")`)
	if calls := p.events("tools/call"); len(calls) != 1 || calls[0].Name != "create_checkout_session" || calls[0].Via != "callTool" {
		t.Fatalf("tools/call %+v, want create_checkout_session through window.openai.callTool", calls)
	}

	s := p.readySession()
	m = p.loadCheckout(s.ID, loadOptions{OpenAIOnly: true})
	logRender(t, "checkout", "with window.openai alone", m)
	p.shot("checkout")
	p.named("the checkout with window.openai alone")
	reads := 0
	for _, c := range p.events("tools/call") {
		if c.Name == "get_checkout_session" && c.Via == "callTool" && strings.Contains(string(c.Arguments), s.ID) {
			reads++
		}
	}
	if reads != 1 {
		t.Errorf("the widget read its session %d times through callTool on mount, want once", reads)
	}

	p.in(chromedp.Click(chromedp.CSS(`[data-link="privacy_policy"]`)))
	p.waitEvent("open-link")
	if links := p.events("open-link"); len(links) != 1 || links[0].Via != "openExternal" || !strings.HasSuffix(links[0].URL, "/static/legal/privacy.html") {
		t.Errorf("open-link %+v, want the privacy policy through window.openai.openExternal", links)
	}
	var supports int
	p.eval(`document.querySelectorAll('[data-link="support"], [data-link="support_url"]').length`, &supports)
	if supports != 1 {
		t.Errorf("%d support links, want one (support_url repeats support)", supports)
	}

	p.pressPay()
	p.receipt(s.ID, "in a window.openai host")
	if pays := p.events("checkout"); len(pays) != 1 || pays[0].Token != "pm_card_visa" {
		t.Errorf("requestCheckout calls %+v", pays)
	}
}

// quantityShown waits until the checkout widget shows n units on the demo mug's line.
func (p *page) quantityShown(what string, n int) {
	p.t.Helper()
	p.waitFor(what, fmt.Sprintf(`(() => { const i = document.querySelector('li.line[data-item="enamel-camp-mug-forest-green"] input'); return i && i.value === "%d"; })()`, n))
}

// testRemount: a host re-mounts the checkout widget with the output of an
// old render_checkout (or none, the input alone): the widget shows the
// session as it is now, in every kind of host; paid since, the receipt;
// expired since, a notice and a new checkout with the same items, paid.
func testRemount(t *testing.T, p *page, dsn string) {
	s := p.readySession()
	var stale json.RawMessage
	p.call("render_checkout", map[string]any{"checkout_session_id": s.ID}, &stale)
	var moved checkout.Session
	p.call("update_checkout_session", map[string]any{"checkout_session_id": s.ID,
		"items": []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 3}}}, &moved)
	for _, h := range []struct {
		name string
		o    loadOptions
	}{
		{"bridge, stale output", loadOptions{Output: stale}},
		{"bridge and window.openai, stale output", loadOptions{OpenAI: true, Output: stale}},
		{"window.openai alone, stale output", loadOptions{OpenAIOnly: true, Output: stale}},
		{"bridge, no output", loadOptions{Output: json.RawMessage("null")}},
		{"window.openai alone, no output", loadOptions{OpenAIOnly: true, Output: json.RawMessage("null")}},
	} {
		p.loadCheckout(s.ID, h.o)
		p.quantityShown(h.name+": the 3 units the session holds now", 3)
		want := total(moved)
		if got := p.text(`[data-total="total"]`); !strings.Contains(got, fmt.Sprintf("$%d.%02d", want/100, want%100)) {
			t.Errorf("%s: the total shows %q, want the session's %d now", h.name, got, want)
		}
	}
	p.shot("current")

	// Paid since: the receipt, from the same stale output.
	var paid checkout.Session
	p.call("complete_checkout", map[string]any{"checkout_session_id": s.ID, "payment_data": map[string]any{"token": "pm_card_visa", "provider": "stripe"}}, &paid)
	if paid.Order == nil {
		t.Fatalf("complete_checkout: %s %+v", paid.Status, paid.Messages)
	}
	p.loadCheckout(s.ID, loadOptions{OpenAI: true, Output: stale})
	p.waitFor("the receipt", `document.querySelector('[data-view="receipt"]')`)
	if h := p.text("h1"); h != fmt.Sprintf("Order #%d is confirmed", paid.Order.Number) {
		t.Errorf("the re-mounted widget's heading is %q, want order %d's receipt", h, paid.Order.Number)
	}
	p.shot("paid-since")

	// Expired since: a notice, and a new checkout with the same items.
	e := p.readySession()
	var staleE json.RawMessage
	p.call("render_checkout", map[string]any{"checkout_session_id": e.ID}, &staleE)
	expire(t, dsn, e.ID)
	p.loadCheckout(e.ID, loadOptions{OpenAIOnly: true, Output: staleE})
	p.waitFor("the expiry notice", `(document.querySelector("#ended-notice") || {innerText: ""}).innerText.includes("expired") && !!document.querySelector("#restart")`)
	p.shot("expired")
	p.named("the expired checkout")
	var payable bool
	p.eval(`!!document.querySelector("#pay") && !document.querySelector("#pay").disabled`, &payable)
	if payable {
		t.Error("Pay is offered for an expired session")
	}
	p.in(chromedp.Click(chromedp.CSS("#restart")))
	p.waitFor("the new checkout", `!document.querySelector("#ended-notice") && document.querySelector("#pay") && !document.querySelector("#pay").disabled`)
	p.quantityShown("the new checkout's 2 units", 2)
	p.pressPay()
	p.waitFor("the receipt", `document.querySelector('[data-view="receipt"]')`)
	pays := p.events("checkout")
	if len(pays) != 1 {
		t.Fatalf("requestCheckout calls %+v, want one", pays)
	}
	var again struct {
		SessionID string `json:"session_id"`
	}
	p.host(`hostAPI.events.find(e => e.kind === "checkout")`, &again)
	if again.SessionID == e.ID || !strings.HasPrefix(again.SessionID, "cs_") {
		t.Fatalf("paid session %q, want a new one, not the expired %s", again.SessionID, e.ID)
	}
	if got := p.session(again.SessionID); got.Status != checkout.Completed || len(got.LineItems) != 1 || got.LineItems[0].Item.Quantity != 2 ||
		got.FulfillmentAddress == nil || got.FulfillmentAddress.PostalCode != e.FulfillmentAddress.PostalCode {
		t.Errorf("the new session is %s with lines %+v, address %+v; want it paid with the expired one's items and address", got.Status, got.LineItems, got.FulfillmentAddress)
	}
}

// testRemountGone: the stale output of a session the shop no longer knows
// (cleared after it ended): the widget says so and starts a new one.
func testRemountGone(t *testing.T, p *page) {
	s := p.readySession()
	var out map[string]any
	p.call("render_checkout", map[string]any{"checkout_session_id": s.ID}, &out)
	out["id"] = "cs_" + strings.Repeat("a", 26)
	stale, _ := json.Marshal(out)
	p.loadCheckout(out["id"].(string), loadOptions{OpenAI: true, Output: stale})
	p.waitFor("the notice", `(document.querySelector("#ended-notice") || {innerText: ""}).innerText.includes("no longer available") && !!document.querySelector("#restart")`)
	p.shot("gone")
	p.in(chromedp.Click(chromedp.CSS("#restart")))
	p.waitFor("the new checkout", `!document.querySelector("#ended-notice") && document.querySelector("#pay") && !document.querySelector("#pay").disabled`)
}

// expire moves a session's expiry into the past, as days passing would.
func expire(t *testing.T, dsn, id string) {
	t.Helper()
	ctx := context.Background()
	db := openDB(t, dsn)
	res := db.WithContext(ctx).Exec("UPDATE checkout_sessions SET expires_at = ? WHERE id = ?", time.Now().Add(-time.Minute).UTC(), id)
	if res.Error != nil || res.RowsAffected != 1 {
		t.Fatalf("expire %s: %v (%d rows)", id, res.Error, res.RowsAffected)
	}
}
