package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"shop/database"
	"shop/database/dbtest"
)

// TestNoUITexts is the golden of what a client without the MCP Apps
// extension (a text-only host, a CLI agent) reads: the server
// instructions, every tool with its description (every tool is listed for
// every client), and the texts of a checkout built to ready and shown.
// Where no widget is shown they must send the buyer to the payment link.
func TestNoUITexts(t *testing.T) {
	shop := startShop(t, dbtest.DSN(t, database.SQLite), nil)
	s := connect(t, shop.url) // declares no extension
	var sb strings.Builder
	fmt.Fprintf(&sb, "# instructions\n%s\n", s.InitializeResult().Instructions)
	tools, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		fmt.Fprintf(&sb, "\n# tool %s\n%s\n", tool.Name, tool.Description)
	}
	cs := session(t, call(t, s, "create_checkout_session", map[string]any{
		"items": []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 2}},
	}))
	fmt.Fprintf(&sb, "\n# create_checkout_session\n%s\n", text(call(t, s, "create_checkout_session", map[string]any{
		"items": []map[string]any{{"id": "enamel-camp-mug-forest-green", "quantity": 1}},
	})))
	fmt.Fprintf(&sb, "\n# update_checkout_session (ready)\n%s\n", text(call(t, s, "update_checkout_session", map[string]any{
		"checkout_session_id": cs.ID, "fulfillment_address": address, "buyer": buyer,
	})))
	fmt.Fprintf(&sb, "\n# render_checkout\n%s\n", text(call(t, s, "render_checkout", map[string]any{"checkout_session_id": cs.ID})))
	got := regexp.MustCompile(`cs_[A-Za-z0-9]+`).ReplaceAllString(sb.String(), "cs_ID")
	for _, want := range []string{"# tool render_checkout", "# tool render_products", "# tool complete_checkout", "# tool create_payment_link"} {
		if !strings.Contains(got, want) {
			t.Errorf("a client without the UI extension does not get %q", want)
		}
	}
	// Each text a model reads before paying names the payment link.
	for _, part := range strings.Split(got, "\n# ")[1:] {
		name, _, _ := strings.Cut(part, "\n")
		if name == "instructions" || strings.HasPrefix(name, "update_checkout_session") || name == "render_checkout" ||
			name == "tool create_checkout_session" || name == "tool update_checkout_session" || name == "tool render_checkout" {
			if !strings.Contains(part, "no widget is shown") || !strings.Contains(part, "create_payment_link") {
				t.Errorf("%s does not tell the model to offer the payment link where no widget is shown:\n%s", name, part)
			}
		}
	}
	if !strings.Contains(got, "Pay opens the shop's payment page") {
		t.Error("the texts do not say that the demo's Pay opens the payment page")
	}
	golden(t, "noui-texts.txt", []byte(got))
}
