package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/widgets"
)

// handoffPolicy writes the demo policy with product_checkout on, beside
// its static files, and returns its path.
func handoffPolicy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	raw, err := os.ReadFile("../../testdata/demo/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	on := strings.Replace(string(raw), "product_checkout: false\n", "product_checkout: true\n", 1)
	if on == string(raw) {
		t.Fatal("the demo policy has no product_checkout: false to turn on")
	}
	if err := os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(on), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "static"), os.DirFS("../../testdata/demo/static")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "policy.yaml")
}

// TestWidgetsHandoff: ChatGPT's product checkout conversion, in headless
// Chromium inside the test host: the host calls checkout_session with
// {checkout_session: {items}} and shows ui://widget/checkout-session.html,
// which is the checkout widget showing the session the tool made; a shop
// whose policy leaves product_checkout off offers neither.
func TestWidgetsHandoff(t *testing.T) {
	chromium, hostPage := needBrowser(t)
	on := startShopArgs(t, nil, "--db", dbtest.DSN(t, database.SQLite), "--config", handoffPolicy(t))
	hostURL := testHost(t, hostPage, on)
	bctx := browser(t, chromium)
	p := openHost(t, bctx, hostURL)

	const variant = "enamel-camp-mug-forest-green"
	m := p.load(loadOptions{URI: widgets.HandoffURI, Tool: widgets.HandoffTool, OpenAI: true,
		Args: map[string]any{"checkout_session": map[string]any{"items": []map[string]any{{"id": variant, "quantity": 2, "offerId": "offer-1"}}}}})
	logRender(t, "checkout", "as checkout-session.html", m)
	p.shot("handoff")
	const line = `li.line[data-item="` + variant + `"]`
	p.waitFor("the handed-off line in the checkout widget", `!!document.querySelector('`+line+`')`)
	if !p.disabled("#pay") {
		t.Error("Pay is enabled for a session without an address")
	}
	if err := p.violations(); err != nil {
		t.Error(err)
	}

	// The session is the core's, as get_checkout_session shows it.
	var s checkout.Session
	p.call(widgets.HandoffTool, map[string]any{"checkout_session": map[string]any{"items": []map[string]any{{"id": variant}}}}, &s)
	if got := p.session(s.ID); got.ID == "" || len(got.LineItems) != 1 || got.LineItems[0].Item.Quantity != 1 {
		t.Errorf("the handed-off session: %+v", got)
	}

	// Off by default: no tool, no template.
	off := connect(t, startShopArgs(t, nil, "--db", dbtest.DSN(t, database.SQLite)))
	tools, err := off.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == widgets.HandoffTool {
			t.Error("checkout_session offered without product_checkout")
		}
	}
}
