package acp

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestBundled: each tool's input schema is the official payload schema
// with every $ref resolved, and line items take a quantity.
func TestBundled(t *testing.T) {
	sch, err := loadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	a := &ACP{currency: "usd"}
	for _, sp := range a.specs() {
		if err := sp.build(sch); err != nil {
			t.Fatalf("%s: %v", sp.name, err)
		}
		if bytes.Contains(sp.input, []byte(`"$ref"`)) {
			t.Errorf("%s: a $ref is left in the input schema", sp.name)
		}
		var in struct {
			Required   []string `json:"required"`
			Properties map[string]struct {
				Properties map[string]struct {
					Items struct {
						Properties map[string]any `json:"properties"`
					} `json:"items"`
				} `json:"properties"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(sp.input, &in); err != nil {
			t.Fatal(err)
		}
		if sp.name == "create_checkout_session" || sp.name == "update_checkout_session" {
			if in.Properties["payload"].Properties["line_items"].Items.Properties["quantity"] == nil {
				t.Errorf("%s: line_items[].quantity is not accepted", sp.name)
			}
		}
	}
	if _, err := sch.bundled("CheckoutSessionWithOrder"); err != nil {
		t.Errorf("bundle the answer's schema: %v", err)
	}
}

func TestQuantity(t *testing.T) {
	for _, tc := range []struct {
		in   json.Number
		want int64
		ok   bool
	}{
		{"", 1, true}, {"2", 2, true}, {"2.0", 2, true}, {"1e2", 100, true},
		{"1.5", 0, false}, {"0", 0, false}, {"-1", 0, false}, {"1000", 0, false},
	} {
		got, err := quantity(tc.in, 3)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("quantity(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && err.Param != "$.payload.line_items[3].quantity" {
			t.Errorf("quantity(%q): param %s", tc.in, err.Param)
		}
	}
}

func TestParams(t *testing.T) {
	for in, want := range map[string]string{
		"$.items[1].quantity":        "$.payload.line_items[1].quantity",
		"$.items":                    "$.payload.line_items",
		"$.fulfillment_address.city": "$.payload.fulfillment_details.address.city",
		"$.checkout_session_id":      "$.id",
		"$.buyer.email":              "$.payload.buyer.email",
		"$.payment_data.token":       "$.payload.payment_data.instrument.credential.token",
		"$.promo_code":               "$.payload.discounts.codes[0]",
		"$.fulfillment_option_id":    "$.payload.selected_fulfillment_options[0].option_id",
		"$.something_else":           "$.something_else",
	} {
		if got := requestParam(in); got != want {
			t.Errorf("requestParam(%s) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"$.line_items[2].item.quantity":     "$.line_items[2].quantity",
		"$.fulfillment_address.postal_code": "$.fulfillment_details.address.postal_code",
		"$.fulfillment_option_id":           "$.selected_fulfillment_options",
		"$.buyer.email":                     "$.buyer.email",
	} {
		if got := sessionParam(in); got != want {
			t.Errorf("sessionParam(%s) = %s, want %s", in, got, want)
		}
	}
}

// BenchmarkPayloadCheck measures what validating a create payload against
// its bundled schema costs a call.
func BenchmarkPayloadCheck(b *testing.B) {
	sch, err := loadSchemas()
	if err != nil {
		b.Fatal(err)
	}
	sp := (&ACP{currency: "usd"}).specs()[0]
	if err := sp.build(sch); err != nil {
		b.Fatal(err)
	}
	payload := []byte(`{"currency":"usd","capabilities":{},"line_items":[{"id":"enamel-camp-mug-cream","quantity":2}],
		"buyer":{"email":"ada@example.com"},"fulfillment_details":{"address":{"name":"A","line_one":"1 Main","city":"Austin","state":"TX","country":"US","postal_code":"78701"}}}`)
	for b.Loop() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
		if err != nil {
			b.Fatal(err)
		}
		if bad := sp.check.check(doc, "$.payload"); bad != nil {
			b.Fatal(bad)
		}
	}
}
