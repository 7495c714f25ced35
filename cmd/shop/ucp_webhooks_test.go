package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/database"
	"shop/database/dbtest"
	"shop/ucp"
)

// hookDelivery is one POST a platform's webhook endpoint received.
type hookDelivery struct {
	req    *http.Request
	body   []byte
	status int
}

// hookPlatform is a platform's webhook endpoint on 127.0.0.1: /hooks
// answers 500 to the first try of each event and 200 to the next; /down
// always answers 500.
type hookPlatform struct {
	*httptest.Server
	mu    sync.Mutex
	got   []hookDelivery
	tries map[string]int
}

func serveHookPlatform(t *testing.T) *hookPlatform {
	p := &hookPlatform{tries: map[string]int{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.tries[r.URL.Path+r.Header.Get("Webhook-Id")]++
		status := http.StatusOK
		if r.URL.Path == "/down" || p.tries[r.URL.Path+r.Header.Get("Webhook-Id")] == 1 {
			status = http.StatusInternalServerError
		}
		p.got = append(p.got, hookDelivery{r.Clone(r.Context()), body, status})
		w.WriteHeader(status)
	}))
	t.Cleanup(p.Close)
	return p
}

// taken waits for the path's deliveries answered 200 to number n and returns them.
func (p *hookPlatform) taken(t *testing.T, path string, n int) []hookDelivery {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var ok []hookDelivery
		p.mu.Lock()
		for _, d := range p.got {
			if d.req.URL.Path == path && d.status == http.StatusOK {
				ok = append(ok, d)
			}
		}
		p.mu.Unlock()
		if len(ok) >= n {
			return ok
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d webhooks taken at %s in 15s, want %d", len(ok), path, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// count is how many POSTs path received.
func (p *hookPlatform) count(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, d := range p.got {
		if d.req.URL.Path == path {
			n++
		}
	}
	return n
}

// TestUCPOrderWebhooks: an agent whose profile names a webhook_url in its
// order capability's config gets its order's events there, signed (RFC
// 9421) with a key of the shop's /.well-known/ucp keys[]: order created
// after a purchase, fulfilled after staff ship it; an event the platform
// answered 500 is tried again and taken once; a platform that always fails
// blocks neither the purchase nor the fulfilment. On SQLite and PostgreSQL.
func TestUCPOrderWebhooks(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) { testUCPOrderWebhooks(t, d) })
	}
}

func testUCPOrderWebhooks(t *testing.T, d database.Dialect) {
	platform := serveHookPlatform(t)
	profileWith := func(hook string) string {
		url := platform.URL + hook
		switch hook {
		case "/plain":
			url = "http://example.com/hooks" // not https, not loopback
		case "/private":
			url = "https://10.0.0.7/hooks" // a private address
		}
		p := strings.ReplaceAll(agentProfileJSON, "2026-04-08", "2026-08-25")
		return strings.Replace(p, `"dev.ucp.shopping.order": [{"version": "2026-08-25"}]`,
			`"dev.ucp.shopping.order": [{"version": "2026-08-25", "config": {"webhook_url": "`+url+`"}}]`, 1)
	}
	agents := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=60")
		w.Write([]byte(profileWith(strings.TrimSuffix(r.URL.Path, ".json"))))
	}))
	t.Cleanup(agents.Close)
	env := map[string]string{"SHOP_UCP_TEST_ALLOW_LOOPBACK": "true", "SHOP_ADMIN_TOKENS": "owner:" + ownerToken}
	dsn := dbtest.DSN(t, d)
	shop := startShop(t, dsn, env, "--webhook-backoff", "300ms")
	keys := getUCPProfile(t, shop.url+"/.well-known/ucp").Keys
	s := connectUCP(t, shop.url)
	admin := connectAdmin(t, shop.url, ownerToken)
	pay := map[string]any{"payment": map[string]any{"instruments": []map[string]any{{"id": "instr_1", "handler_id": "sandbox_card", "type": "card",
		"credential": map[string]any{"type": "token", "token": "pm_card_visa"}}}}}
	buy := func(profile, key string) string {
		co, _ := ucpBasket(t, s, ucpMeta(profile, ""))
		done := ucpCall[ucp.Checkout](t, s, "complete_checkout", map[string]any{"meta": ucpMeta(profile, key), "id": co.ID, "checkout": pay})
		if done.Status != "completed" || done.Order == nil {
			t.Fatalf("complete_checkout: %+v", done)
		}
		return done.Order.ID
	}
	fulfil := func(id string) {
		if res := call(t, admin, "fulfill_order", map[string]any{"order_id": id, "carrier": "USPS", "tracking_number": "9400111899223100001234"}); res.IsError {
			t.Fatalf("fulfill_order: %s", resultText(res))
		}
	}
	twoStep := func(tool string, args map[string]any) {
		prev := call(t, admin, tool, args)
		if prev.IsError {
			t.Fatalf("%s preview: %s", tool, resultText(prev))
		}
		args["confirm"] = structured[struct{ Confirm string }](t, prev).Confirm
		if res := call(t, admin, tool, args); res.IsError {
			t.Fatalf("%s: %s", tool, resultText(res))
		}
	}
	check := func(dl hookDelivery, id string, fulfilled int64) {
		t.Helper()
		if err := ucp.VerifySignature(dl.req, dl.body, keys); err != nil {
			t.Errorf("the webhook's signature does not verify with the shop's keys[]: %v\n%v", err, dl.req.Header)
		}
		if dl.req.Header.Get("Webhook-Id") == "" || dl.req.Header.Get("Webhook-Timestamp") == "" ||
			dl.req.Header.Get("UCP-Agent") != `profile="`+shop.url+`/.well-known/ucp"` {
			t.Errorf("webhook headers: %v", dl.req.Header)
		}
		checkREST(t, "order", dl.body)
		var o ucp.Order
		if err := json.NewDecoder(bytes.NewReader(dl.body)).Decode(&o); err != nil || o.ID != id || o.LineItems[0].Quantity.Fulfilled != fulfilled {
			t.Errorf("webhook body (err %v): %s", err, dl.body)
		}
	}

	id := buy(agents.URL+"/hooks.json", "0b6c1a0e-0000-4000-8000-0000000000b1")
	created := platform.taken(t, "/hooks", 1)[0]
	check(created, id, 0)
	fulfil(id)
	got := platform.taken(t, "/hooks", 2)
	check(got[1], id, 3)
	if got[0].req.Header.Get("Webhook-Id") == got[1].req.Header.Get("Webhook-Id") {
		t.Error("created and fulfilled have one Webhook-Id")
	}
	twoStep("refund_order", map[string]any{"order_id": id, "amount": 500, "reason": "a chipped mug"})
	check(platform.taken(t, "/hooks", 3)[2], id, 3)
	canceled := buy(agents.URL+"/hooks.json", "0b6c1a0e-0000-4000-8000-0000000000b3")
	twoStep("cancel_order", map[string]any{"order_id": canceled, "reason": "the buyer changed their mind"})
	got = platform.taken(t, "/hooks", 6) // its created, canceled and refunded (the cancel refunds the payment)
	check(got[4], canceled, 0)
	check(got[5], canceled, 0)
	var last ucp.Order
	if json.Unmarshal(got[4].body, &last) != nil || last.LineItems[0].Status != "removed" {
		t.Errorf("the canceled order's webhook: %s", got[4].body)
	}
	// Each was refused once (500), then taken once: twelve POSTs in all, no more.
	time.Sleep(1500 * time.Millisecond)
	if n := platform.count("/hooks"); n != 12 || len(platform.taken(t, "/hooks", 6)) != 6 {
		t.Errorf("%d POSTs to /hooks, want 12 (each of 6 events refused once, then taken once)", n)
	}

	// A webhook_url the shop may not post to refuses the checkout's creation, naming the field.
	for _, hook := range []string{"/plain", "/private"} {
		bad := ucpCall[ucp.ErrorResponse](t, s, "create_checkout", map[string]any{"meta": ucpMeta(agents.URL+hook+".json", ""),
			"checkout": map[string]any{"line_items": ucpLine(ucpVariant, 1)}})
		if len(bad.Messages) == 0 || bad.Messages[0].Path != `$.meta["ucp-agent"].profile` || !strings.Contains(bad.Messages[0].Content, "config.webhook_url") {
			t.Errorf("create_checkout with the webhook_url of %s: %+v", hook, bad)
		}
	}
	keptFromCreation(t, s, dsn, agents.URL, platform, pay)

	// A platform that always fails: the order is placed and fulfilled all the same.
	down := buy(agents.URL+"/down.json", "0b6c1a0e-0000-4000-8000-0000000000b2")
	fulfil(down)
	deadline := time.Now().Add(10 * time.Second)
	for platform.count("/down") < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := platform.count("/down"); n < 3 {
		t.Errorf("%d tries at a failing platform, want its events tried again", n)
	}
}

// keptFromCreation: the order's webhook URL is the one in the profile of
// the agent that created the checkout; another agent holding the checkout's
// id and completing it (declined here) does not move it, and the order's
// events go to the creator's URL only.
func keptFromCreation(t *testing.T, s *mcp.ClientSession, dsn, agents string, platform *hookPlatform, pay map[string]any) {
	t.Helper()
	creator, thief := ucpMeta(agents+"/mine.json", ""), agents+"/thief.json"
	co := ucpCall[ucp.Checkout](t, s, "create_checkout", map[string]any{"meta": creator, "checkout": map[string]any{
		"buyer": map[string]any{"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"}, "line_items": ucpLine(ucpVariant, 1),
		"fulfillment": map[string]any{"methods": []map[string]any{{"type": "shipping", "destinations": []any{ucpDestination}}}}}})
	co = ucpCall[ucp.Checkout](t, s, "update_checkout", map[string]any{"meta": creator, "id": co.ID, "checkout": map[string]any{
		"fulfillment": map[string]any{"methods": []map[string]any{{"id": "shipping_1", "groups": []map[string]any{{"id": "package_1", "selected_option_id": "us-express"}}}}}}})
	if co.Status != "ready_for_complete" {
		t.Fatalf("checkout: %+v", co)
	}
	db := openDB(t, dsn)
	hookOf := func() string {
		var url string
		if err := db.Raw("SELECT url FROM order_webhooks WHERE session_id = ?", co.ID).Scan(&url).Error; err != nil {
			t.Fatal(err)
		}
		return url
	}
	if got := hookOf(); !strings.HasSuffix(got, "/mine") {
		t.Fatalf("webhook URL after creation: %q, want the creator's /mine", got)
	}
	declined := map[string]any{"payment": map[string]any{"instruments": []map[string]any{{"id": "instr_1", "handler_id": "sandbox_card", "type": "card",
		"credential": map[string]any{"type": "token", "token": "pm_card_visa_chargeDeclined"}}}}}
	_ = call(t, s, "complete_checkout", map[string]any{"meta": ucpMeta(thief, "0b6c1a0e-0000-4000-8000-0000000000c1"), "id": co.ID, "checkout": declined})
	if got := hookOf(); !strings.HasSuffix(got, "/mine") {
		t.Errorf("webhook URL after another agent's declined complete_checkout: %q, want the creator's /mine", got)
	}
	done := ucpCall[ucp.Checkout](t, s, "complete_checkout", map[string]any{"meta": ucpMeta(agents+"/mine.json", "0b6c1a0e-0000-4000-8000-0000000000c2"), "id": co.ID, "checkout": pay})
	if done.Status != "completed" {
		t.Fatalf("complete_checkout: %+v", done)
	}
	platform.taken(t, "/mine", 1)
	if n := platform.count("/thief"); n != 0 {
		t.Errorf("%d webhooks went to the other agent's URL", n)
	}
}
