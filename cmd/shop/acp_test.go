package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"gorm.io/gorm"

	"shop/database"
	"shop/database/dbtest"
)

// acpShop is a running shop with its database open beside it.
type acpShop struct {
	*running
	db    *gorm.DB
	agent acpClient
}

func startACPShop(t *testing.T, d database.Dialect) *acpShop {
	t.Helper()
	return startACPShopEnv(t, dbtest.DSN(t, d), acpEnv())
}

// startACPShopEnv starts a shop on dsn with env (acpEnv's agents, and more).
func startACPShopEnv(t *testing.T, dsn string, env map[string]string) *acpShop {
	t.Helper()
	r := startShop(t, dsn, env)
	return &acpShop{running: r, db: openDB(t, dsn), agent: acpClient{url: r.url, token: acpAgentToken}}
}

func (s *acpShop) count(t *testing.T, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := s.db.Raw(sql, args...).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// ready creates a session of units of variant over ACP, ready for payment.
func (s *acpShop) ready(t *testing.T, variant string, units int) acpSession {
	t.Helper()
	cs := s.agent.call(t, "create_checkout_session", acpArgs(newKey(t, "create"), "", shippable(variant, units))).session(t)
	if cs.Status != "ready_for_payment" {
		t.Fatalf("session %s is %s: %+v", cs.ID, cs.Status, cs.Messages)
	}
	return cs
}

// TestACPBinding is the binding's whole flow, every answer checked against
// the official schema: the tools list, the api_version and envelope rules,
// create, update, a decline and 3D Secure, the payment, the order and its
// permalink, cancel, and the discovery document.
func TestACPBinding(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			s := startACPShop(t, d)
			t.Run("ToolsList", func(t *testing.T) { testACPToolsList(t, s) })
			t.Run("APIVersion", func(t *testing.T) { testACPVersions(t, s) })
			t.Run("Envelope", func(t *testing.T) { testACPEnvelope(t, s) })
			t.Run("Flow", func(t *testing.T) { testACPFlow(t, s) })
			t.Run("BuyersOfOneAgent", func(t *testing.T) { testACPBuyers(t, s) })
			t.Run("Examples", func(t *testing.T) { testACPExamples(t, s) })
			t.Run("Idempotency", func(t *testing.T) { testACPIdempotency(t, s) })
			t.Run("ConcurrentComplete", func(t *testing.T) { testACPConcurrentComplete(t, s) })
			t.Run("SameStock", func(t *testing.T) { testACPSameStock(t, s) })
			t.Run("AdminSeesChannel", func(t *testing.T) { testACPAdmin(t, s) })
			t.Run("Auth", func(t *testing.T) { testACPAuth(t, s) })
			t.Run("MCPClient", func(t *testing.T) { testACPClient(t, s) })
			t.Run("Discovery", func(t *testing.T) { testACPDiscovery(t, s) })
		})
	}
}

func testACPToolsList(t *testing.T, s *acpShop) {
	a := s.agent.post(t, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if a.Error != nil {
		t.Fatal(a.Error)
	}
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Meta        map[string]any  `json:"_meta"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(a.Raw, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if bytes.Contains(tool.InputSchema, []byte(`"$ref"`)) {
			t.Errorf("%s: the input schema keeps a $ref; the binding wants them bundled", tool.Name)
		}
		if tool.Meta != nil {
			t.Errorf("%s has _meta %v; the binding's tools carry no widget", tool.Name, tool.Meta)
		}
		var sch struct {
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(tool.InputSchema, &sch)
		if !slices.Contains(sch.Required, "meta") || sch.Properties["meta"] == nil {
			t.Errorf("%s: meta is not a required argument: %s", tool.Name, tool.InputSchema)
		}
	}
	slices.Sort(names)
	want := []string{"cancel_checkout_session", "complete_checkout_session", "create_checkout_session", "get_checkout_session", "update_checkout_session"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want exactly %v", names, want)
	}
}

func testACPVersions(t *testing.T, s *acpShop) {
	for _, tc := range []struct {
		name string
		meta map[string]any
		code string
	}{
		{"Missing", map[string]any{"idempotency_key": "x"}, "missing_api_version"},
		{"Unknown", map[string]any{"api_version": "2025-09-29"}, "unsupported_api_version"},
		{"Garbage", map[string]any{"api_version": "latest"}, "unsupported_api_version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, tool := range []string{"create_checkout_session", "get_checkout_session"} {
				e := s.agent.call(t, tool, map[string]any{"meta": tc.meta, "id": "cs_x", "payload": map[string]any{}}).acpErr(t)
				if e.Type != "invalid_request" || e.Code != tc.code || !slices.Equal(e.SupportedVersions, []string{acpVersion}) {
					t.Errorf("%s: %+v; want invalid_request %s naming %s", tool, e, tc.code, acpVersion)
				}
			}
		})
	}
}

func testACPEnvelope(t *testing.T, s *acpShop) {
	meta := map[string]any{"api_version": acpVersion}
	for _, tc := range []struct {
		name, tool string
		args       any
	}{
		{"NoMeta", "get_checkout_session", map[string]any{"id": "cs_x"}},
		{"MetaNotObject", "get_checkout_session", map[string]any{"meta": "2026-04-17", "id": "cs_x"}},
		{"VersionNotString", "get_checkout_session", map[string]any{"meta": map[string]any{"api_version": 20260417}, "id": "cs_x"}},
		{"NoID", "get_checkout_session", map[string]any{"meta": meta}},
		{"IDNotString", "update_checkout_session", map[string]any{"meta": meta, "id": 7, "payload": map[string]any{}}},
		{"NoPayload", "create_checkout_session", map[string]any{"meta": meta}},
		{"PayloadArray", "complete_checkout_session", map[string]any{"meta": meta, "id": "cs_x", "payload": []any{}}},
		{"UnknownArgument", "get_checkout_session", map[string]any{"meta": meta, "id": "cs_x", "checkout_session_id": "cs_x"}},
		{"PayloadOnGet", "get_checkout_session", map[string]any{"meta": meta, "id": "cs_x", "payload": map[string]any{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := s.agent.call(t, tc.tool, tc.args)
			if a.Error == nil || a.Error.Code != -32602 || a.Error.Message == "" {
				t.Errorf("%s %v: %+v %+v; want -32602", tc.tool, tc.args, a.Error, a.Result)
			}
		})
	}
	// cancel's payload is optional: absent or null is no payload.
	cs := s.ready(t, "stoneware-coffee-mug-12-oz", 1)
	a := s.agent.call(t, "cancel_checkout_session", map[string]any{"meta": meta, "id": cs.ID, "payload": nil})
	if got := a.session(t); got.Status != "canceled" {
		t.Errorf("cancel with payload null: %s", got.Status)
	}
}

func testACPFlow(t *testing.T, s *acpShop) {
	created := s.agent.call(t, "create_checkout_session", acpArgs(newKey(t, "create"), "", shippable("enamel-camp-mug-cream", 2))).session(t)
	if created.Status != "ready_for_payment" || len(created.LineItems) != 1 || created.LineItems[0].Quantity != 2 {
		t.Fatalf("created %+v", created)
	}
	handlers := []string{}
	for _, h := range created.Capabilities.Payment.Handlers {
		handlers = append(handlers, h.ID)
	}
	if !slices.Equal(handlers, []string{"card_spt", "card_test"}) {
		t.Errorf("payment handlers %v, want card_spt and (sandbox) card_test", handlers)
	}
	var lineTotal int64
	for _, tot := range created.LineItems[0].Totals {
		if tot.Type == "total" {
			lineTotal = tot.Amount
		}
	}
	if lineTotal <= 0 {
		t.Errorf("line totals %+v: no total", created.LineItems[0].Totals)
	}

	testACPRefusals(t, s, created.ID)
	// Choose the other shipping option, with the session's own option ids.
	if len(created.FulfillmentOptions) < 2 {
		t.Fatalf("options %+v", created.FulfillmentOptions)
	}
	opt := created.FulfillmentOptions[1].ID
	updated := s.agent.call(t, "update_checkout_session", acpArgs(newKey(t, "update"), created.ID, map[string]any{
		"selected_fulfillment_options": []any{map[string]any{"type": "shipping", "option_id": opt, "item_ids": []string{"enamel-camp-mug-cream"}}},
	})).session(t)
	if len(updated.SelectedFulfillmentOptions) != 1 || updated.SelectedFulfillmentOptions[0].OptionID != opt {
		t.Errorf("selected %+v, want %s", updated.SelectedFulfillmentOptions, opt)
	}

	testACPDeclines(t, s, created.ID)
	done := s.agent.call(t, "complete_checkout_session", acpArgs(newKey(t, "pay"), created.ID, pay("pm_card_visa"))).session(t)
	if done.Status != "completed" || done.Order == nil || done.Order.PermalinkURL == "" {
		t.Fatalf("completed %+v", done)
	}
	res, err := http.Get(done.Order.PermalinkURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !bytes.Contains(page, []byte(done.Order.OrderNumber)) {
		t.Errorf("permalink %s: %d", done.Order.PermalinkURL, res.StatusCode)
	}
	// Paid again with another card: the same order, nothing charged.
	again := s.agent.call(t, "complete_checkout_session", acpArgs(newKey(t, "again"), created.ID, pay("pm_card_mastercard"))).session(t)
	if again.Order == nil || again.Order.ID != done.Order.ID {
		t.Errorf("second completion: %+v, want order %s", again.Order, done.Order.ID)
	}
	if n := s.count(t, "SELECT COUNT(*) FROM payment_attempts WHERE session_id = ? AND status = 'succeeded'", created.ID); n != 1 {
		t.Errorf("%d successful charges, want 1", n)
	}
	e := s.agent.call(t, "cancel_checkout_session", acpArgs(newKey(t, "cancel"), created.ID, nil)).acpErr(t)
	if e.Type != "invalid_request" {
		t.Errorf("cancel of a completed session: %+v", e)
	}
}

// testACPBuyers: one agent's buyers, from one address, are buyers of their
// own for the hold limits (5 open sessions a buyer by default).
func testACPBuyers(t *testing.T, s *acpShop) {
	for i := range 7 {
		p := shippable("stoneware-coffee-mug-16-oz", 1)
		p["buyer"] = map[string]any{"email": fmt.Sprintf("buyer%d@example.com", i)}
		if cs := s.agent.call(t, "create_checkout_session", acpArgs("", "", p)).session(t); cs.Status != "ready_for_payment" {
			t.Errorf("buyer %d: %s %+v", i, cs.Status, cs.Messages)
		}
	}
}

// testACPRefusals: a fraction of a unit, and a payload the schema refuses.
func testACPRefusals(t *testing.T, s *acpShop, id string) {
	t.Run("FractionRefused", func(t *testing.T) {
		e := s.agent.call(t, "update_checkout_session", acpArgs(newKey(t, "u"), id,
			map[string]any{"line_items": []any{map[string]any{"id": "enamel-camp-mug-cream", "quantity": 1.5}}})).acpErr(t)
		if e.Type != "invalid_request" || e.Param != "$.payload.line_items[0].quantity" || !strings.Contains(e.Message, "whole") {
			t.Errorf("quantity 1.5: %+v", e)
		}
	})
	t.Run("SchemaRefusal", func(t *testing.T) {
		e := s.agent.call(t, "create_checkout_session", acpArgs("", "", map[string]any{"capabilities": map[string]any{},
			"line_items": []any{map[string]any{"id": "enamel-camp-mug-cream"}}})).acpErr(t)
		// As the binding's error_invalid_request example shows it.
		if e.Type != "invalid_request" || e.Code != "missing_required_field" || e.Param != "$.payload.currency" || e.Message != "Missing required field: currency" {
			t.Errorf("no currency: %+v", e)
		}
	})
}

// testACPDeclines: a declined card and one that needs 3D Secure, as the
// binding shows a decline, and a handler the shop does not offer.
func testACPDeclines(t *testing.T, s *acpShop, id string) {
	t.Run("Declined", func(t *testing.T) {
		e := s.agent.call(t, "complete_checkout_session", acpArgs(newKey(t, "c"), id, pay("pm_card_visa_chargeDeclined"))).acpErr(t)
		if e.Type != "processing_error" || e.Code != "payment_declined" {
			t.Errorf("declined: %+v; want processing_error payment_declined, as the binding's example", e)
		}
		if got := s.agent.call(t, "get_checkout_session", acpArgs("", id, nil)).session(t); got.Status != "ready_for_payment" {
			t.Errorf("after a decline the session is %s, want ready_for_payment", got.Status)
		}
	})
	t.Run("3DS", func(t *testing.T) {
		e := s.agent.call(t, "complete_checkout_session", acpArgs(newKey(t, "c"), id, pay("pm_card_authenticationRequired"))).acpErr(t)
		if e.Type != "processing_error" || e.Code != "requires_3ds" {
			t.Errorf("3DS: %+v; want processing_error requires_3ds", e)
		}
	})
	t.Run("UnknownHandler", func(t *testing.T) {
		p := pay("pm_card_visa")
		p["payment_data"].(map[string]any)["handler_id"] = "paypal"
		e := s.agent.call(t, "complete_checkout_session", acpArgs(newKey(t, "c"), id, p)).acpErr(t)
		if e.Param != "$.payload.payment_data.handler_id" {
			t.Errorf("handler paypal: %+v", e)
		}
	})
}

func testACPDiscovery(t *testing.T, s *acpShop) {
	res, err := http.Get(s.url + "/.well-known/acp.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /.well-known/acp.json: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	validACP(t, "DiscoveryResponse", body)
	var d struct {
		Protocol struct {
			Version           string   `json:"version"`
			SupportedVersions []string `json:"supported_versions"`
		} `json:"protocol"`
		Transports []string `json:"transports"`
	}
	_ = json.Unmarshal(body, &d)
	if d.Protocol.Version != acpVersion || !slices.Equal(d.Protocol.SupportedVersions, []string{acpVersion}) || !slices.Equal(d.Transports, []string{"mcp"}) {
		t.Errorf("discovery %s", body)
	}
}
