package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"shop"
)

// The ACP binding's tests speak JSON-RPC to /acp/mcp over HTTP, as any
// agent does (the server is stateless: each call is one POST), and check
// every answer against the official JSON Schema of 2026-04-17 kept in
// testdata/acp (see its SOURCE.md).

const (
	acpAgentToken = "agent-one-token-0123456789abcdef"
	acpOtherToken = "agent-two-token-0123456789abcdef"
	acpVersion    = "2026-04-17"
)

// acpEnv configures a shop with two agents and an owner.
func acpEnv() map[string]string {
	return map[string]string{
		"SHOP_ACP_TOKENS":   "agent-one:" + acpAgentToken + ",agent-two:" + acpOtherToken,
		"SHOP_ADMIN_TOKENS": "owner:" + ownerToken,
	}
}

// acpSchemas are the official definitions answers are checked against.
var acpSchemas = sync.OnceValues(func() (map[string]*sjs.Schema, error) {
	raw, err := shop.Specs.ReadFile("testdata/acp/schema.agentic_checkout.json")
	if err != nil {
		return nil, err
	}
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	const url = "https://example.com/schemas/agentic-checkout/bundle.schema.json"
	c := sjs.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	out := map[string]*sjs.Schema{}
	for _, name := range []string{"CheckoutSession", "CheckoutSessionWithOrder", "Error", "DiscoveryResponse"} {
		if out[name], err = c.Compile(url + "#/$defs/" + name); err != nil {
			return nil, err
		}
	}
	return out, nil
})

// validACP fails the test unless v (JSON) follows the official definition name.
func validACP(t *testing.T, name string, v []byte) {
	t.Helper()
	schemas, err := acpSchemas()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(v))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := schemas[name].Validate(doc); err != nil {
		t.Errorf("answer does not follow the ACP schema's %s: %v\n%s", name, err, v)
	}
}

// rpcError is a JSON-RPC error answer.
type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// acpError is the ACP Error in an rpcError's data.
type acpError struct {
	Type              string   `json:"type"`
	Code              string   `json:"code"`
	Message           string   `json:"message"`
	Param             string   `json:"param"`
	SupportedVersions []string `json:"supported_versions"`
}

// acpAnswer is one answer of /acp/mcp: the tool's result or an error.
type acpAnswer struct {
	Status int
	Result *struct {
		Content           []struct{ Type, Text string } `json:"content"`
		StructuredContent json.RawMessage               `json:"structuredContent"`
		IsError           bool                          `json:"isError"`
		Meta              map[string]any                `json:"_meta"`
	} `json:"result"`
	Error *rpcError `json:"error"`
	// Raw is the result as sent.
	Raw json.RawMessage `json:"-"`
}

// acpErr returns the ACP error of an answer, failing the test unless it is
// a -32000 error whose data follows the Error schema.
func (a acpAnswer) acpErr(t *testing.T) acpError {
	t.Helper()
	if a.Error == nil || a.Error.Code != -32000 {
		t.Fatalf("want a -32000 error, got %+v %+v", a.Result, a.Error)
	}
	validACP(t, "Error", a.Error.Data)
	var e acpError
	if err := json.Unmarshal(a.Error.Data, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// acpSession is the part of an ACP CheckoutSession the tests read.
type acpSession struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	Capabilities struct {
		Payment struct {
			Handlers []struct {
				ID string `json:"id"`
			} `json:"handlers"`
		} `json:"payment"`
	} `json:"capabilities"`
	LineItems []struct {
		ID       string `json:"id"`
		Quantity int64  `json:"quantity"`
		Totals   []struct {
			Type   string `json:"type"`
			Amount int64  `json:"amount"`
		} `json:"totals"`
	} `json:"line_items"`
	FulfillmentOptions []struct {
		ID string `json:"id"`
	} `json:"fulfillment_options"`
	SelectedFulfillmentOptions []struct {
		OptionID string `json:"option_id"`
	} `json:"selected_fulfillment_options"`
	Totals []struct {
		Type   string `json:"type"`
		Amount int64  `json:"amount"`
	} `json:"totals"`
	Messages []struct {
		Type, Code, Param string
	} `json:"messages"`
	Order *struct {
		ID           string `json:"id"`
		OrderNumber  string `json:"order_number"`
		PermalinkURL string `json:"permalink_url"`
	} `json:"order"`
}

// session returns the answer's CheckoutSession, failing the test unless it
// is a result with one text block and a session that follows the schema
// (CheckoutSessionWithOrder when it has an order).
func (a acpAnswer) session(t *testing.T) acpSession {
	t.Helper()
	if a.Error != nil || a.Result == nil {
		t.Fatalf("want a result, got error %+v", a.Error)
	}
	if a.Result.IsError || len(a.Result.Content) != 1 || a.Result.Content[0].Type != "text" || a.Result.Meta != nil {
		t.Errorf("result: isError %v, content %+v, _meta %v; want one text block and no _meta", a.Result.IsError, a.Result.Content, a.Result.Meta)
	}
	var s acpSession
	if err := json.Unmarshal(a.Result.StructuredContent, &s); err != nil {
		t.Fatal(err)
	}
	name := "CheckoutSession"
	if s.Order != nil {
		name = "CheckoutSessionWithOrder"
	}
	validACP(t, name, a.Result.StructuredContent)
	return s
}

// acpClient posts JSON-RPC to a shop's /acp/mcp as one agent.
type acpClient struct {
	url, token string
	// from, when set, is the client's address the shop is told of (in
	// X-Forwarded-For, for a shop started with --client-ip-header).
	from string
}

// post sends one JSON-RPC request body and decodes the answer.
func (c acpClient) post(t *testing.T, body []byte) acpAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/acp/mcp", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.from != "" {
		req.Header.Set("X-Forwarded-For", c.from)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return acpAnswer{}
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	a := acpAnswer{Status: res.StatusCode}
	if res.StatusCode == http.StatusOK {
		var raw struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(b, &a); err != nil || json.Unmarshal(b, &raw) != nil {
			t.Errorf("answer %s: %v", b, err)
		}
		a.Raw = raw.Result
	}
	return a
}

// call calls a tool with the given arguments.
func (c acpClient) call(t *testing.T, tool string, args any) acpAnswer {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	if err != nil {
		t.Fatal(err)
	}
	return c.post(t, body)
}

// args builds {meta, id, payload}: key is the idempotency key ("" none),
// id "" none, payload nil none.
func acpArgs(key, id string, payload any) map[string]any {
	meta := map[string]any{"api_version": acpVersion}
	if key != "" {
		meta["idempotency_key"] = key
	}
	args := map[string]any{"meta": meta}
	if id != "" {
		args["id"] = id
	}
	if payload != nil {
		args["payload"] = payload
	}
	return args
}

// shippable is a create payload for variant of quantity units, shipped to
// a complete US address.
func shippable(variant string, quantity any) map[string]any {
	return map[string]any{
		"currency": "usd", "capabilities": map[string]any{},
		"line_items": []any{map[string]any{"id": variant, "quantity": quantity}},
		"buyer":      map[string]any{"full_name": "Ada Agent", "email": "ada@example.com"},
		"fulfillment_details": map[string]any{"name": "Ada Agent", "phone_number": "+15551234567", "address": map[string]any{
			"name": "Ada Agent", "line_one": "1 Market St", "city": "San Francisco", "state": "CA", "country": "US", "postal_code": "94105"}},
	}
}

// pay is a complete payload with the test handler and a Stripe test method.
func pay(method string) map[string]any {
	return map[string]any{"payment_data": map[string]any{"handler_id": "card_test",
		"instrument": map[string]any{"type": "card", "credential": map[string]any{"type": "stripe_test_payment_method", "token": method}}}}
}

// newKey is a fresh idempotency key.
func newKey(t *testing.T, what string) string {
	return fmt.Sprintf("%s-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), what, time.Now().UnixNano())
}
