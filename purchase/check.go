package purchase

import (
	"shop/contract"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The checks of a purchase run: the contract's tool surface (docs/buying.md),
// the identities of its figures (§4), and receipts against sessions.

// contractTool is a buyer tool as docs/buying.md lists it.
type contractTool struct {
	name     string
	readOnly bool   // readOnlyHint: true for "data, read-only" tools and render tools (they change nothing, so hosts need not ask the buyer to confirm), false for the others
	render   bool   // carries a template in _meta
	first    string // for a render tool: the tool its description says to call first
}

var contractTools = []contractTool{
	{name: "search_products", readOnly: true},
	{name: "get_product", readOnly: true},
	{name: "create_checkout_session"},
	{name: "update_checkout_session"},
	{name: "get_checkout_session", readOnly: true},
	{name: "cancel_checkout_session"},
	{name: "render_products", readOnly: true, render: true, first: "search_products"},
	{name: "render_checkout", readOnly: true, render: true, first: "create_checkout_session"},
	{name: "complete_checkout"},
	{name: "create_payment_link"},
	{name: "get_order", readOnly: true},
}

// pendingTools are contract tools whose issue has not landed yet: their
// absence is noted in the report, not failed. Delete an entry when its tool
// ships; from then on the run requires it like the others.
var pendingTools = map[string]string{}

// checkTools lists the tools and checks the contract's surface.
func (p *purchaser) checkTools(ctx context.Context) (string, error) {
	p.tools = map[string]*mcp.Tool{}
	for t, err := range p.cs.Tools(ctx, nil) {
		if err != nil {
			return "", err
		}
		p.tools[t.Name] = t
	}
	var problems, notes []string
	for _, c := range contractTools {
		t := p.tools[c.name]
		if t == nil {
			if why, ok := pendingTools[c.name]; ok {
				notes = append(notes, fmt.Sprintf("%s not served yet (%s)", c.name, why))
				continue
			}
			problems = append(problems, c.name+": missing")
			continue
		}
		problems = append(problems, toolProblems(c, t)...)
	}
	if len(problems) > 0 {
		return "", errors.New(strings.Join(problems, "; "))
	}
	d := fmt.Sprintf("%d tools; every contract tool has its annotations, render tools their _meta", len(p.tools))
	if len(notes) > 0 {
		d += "; note: " + strings.Join(notes, ", ")
	}
	return d, nil
}

// toolProblems checks one tool against its contract entry. go-sdk decodes
// readOnlyHint and idempotentHint into plain bools, so of those only the
// value can be checked; destructiveHint and openWorldHint must be present.
func toolProblems(c contractTool, t *mcp.Tool) []string {
	var ps []string
	bad := func(format string, a ...any) { ps = append(ps, c.name+": "+fmt.Sprintf(format, a...)) }
	a := t.Annotations
	switch {
	case a == nil:
		bad("no annotations")
	default:
		if a.DestructiveHint == nil {
			bad("annotations without destructiveHint")
		}
		if a.OpenWorldHint == nil || *a.OpenWorldHint {
			bad("openWorldHint must be false")
		}
		if a.ReadOnlyHint != c.readOnly {
			bad("readOnlyHint %t, want %t", a.ReadOnlyHint, c.readOnly)
		}
	}
	if t.InputSchema == nil {
		bad("no inputSchema")
	}
	uri := renderURI(t)
	if !c.render {
		for _, k := range []string{"ui", "ui/resourceUri", "openai/outputTemplate"} {
			if _, ok := t.Meta[k]; ok {
				bad("a data tool with a template (_meta[%q])", k)
			}
		}
		return ps
	}
	if !strings.HasPrefix(uri, "ui://") {
		bad("_meta.ui.resourceUri %q, want a ui:// URI", uri)
	}
	for _, k := range []string{"ui/resourceUri", "openai/outputTemplate"} {
		if v, _ := t.Meta[k].(string); v != uri {
			bad("_meta[%q] %q, want %q as in _meta.ui.resourceUri", k, v, uri)
		}
	}
	for _, k := range []string{"openai/toolInvocation/invoking", "openai/toolInvocation/invoked"} {
		if v, _ := t.Meta[k].(string); v == "" {
			bad("no _meta[%q]", k)
		}
	}
	if !strings.Contains(t.Description, c.first) {
		bad("the description does not say to call %s first", c.first)
	}
	return ps
}

// renderURI is a tool's template URI (_meta.ui.resourceUri), or "".
func renderURI(t *mcp.Tool) string {
	if t == nil {
		return ""
	}
	ui, _ := t.Meta["ui"].(map[string]any)
	uri, _ := ui["resourceUri"].(string)
	return uri
}

// widgetCSP is _meta.ui.csp of a template.
type widgetCSP struct {
	ConnectDomains  []string `json:"connectDomains"`
	ResourceDomains []string `json:"resourceDomains"`
}

func uiCSP(meta mcp.Meta) (csp widgetCSP) {
	var m struct {
		UI struct {
			CSP widgetCSP `json:"csp"`
		} `json:"ui"`
	}
	b, _ := json.Marshal(meta)
	_ = json.Unmarshal(b, &m)
	return m.UI.CSP
}

// checkUIResource checks a template's MIME type and _meta.ui.csp, and, when
// text is given, that it is one HTML document.
func checkUIResource(what, mimeType string, meta mcp.Meta, text *string) error {
	if mimeType != "text/html;profile=mcp-app" {
		return fmt.Errorf("%s: mimeType %q, want text/html;profile=mcp-app", what, mimeType)
	}
	var m struct {
		UI *struct {
			CSP *struct {
				ConnectDomains  *[]string `json:"connectDomains"`
				ResourceDomains *[]string `json:"resourceDomains"`
			} `json:"csp"`
		} `json:"ui"`
	}
	b, _ := json.Marshal(meta)
	if err := json.Unmarshal(b, &m); err != nil || m.UI == nil || m.UI.CSP == nil || m.UI.CSP.ConnectDomains == nil || m.UI.CSP.ResourceDomains == nil {
		return fmt.Errorf("%s: _meta.ui.csp with connectDomains and resourceDomains missing (got %s)", what, b)
	}
	if text == nil {
		return nil
	}
	doc := strings.ToLower(strings.TrimSpace(*text))
	if !strings.HasPrefix(doc, "<!doctype html>") || !strings.Contains(doc, "</html>") || strings.Count(doc, "<html") != 1 {
		return fmt.Errorf("%s: not one HTML5 document (%.40q…)", what, *text)
	}
	return nil
}

func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }

// checkNewSession checks a session as create_checkout_session answers it,
// before it has an address.
func checkNewSession(s contract.Session, items []contract.Item) error {
	switch {
	case !strings.HasPrefix(s.ID, "cs_"):
		return fmt.Errorf("id %q, want cs_…", s.ID)
	case s.Status != contract.SessionNotReady:
		return fmt.Errorf("status %s without an address, want not_ready_for_payment", s.Status)
	case s.PaymentProvider.Provider != "stripe":
		return fmt.Errorf("payment_provider.provider %q, want stripe", s.PaymentProvider.Provider)
	case !s.ExpiresAt.After(time.Now()):
		return fmt.Errorf("expires_at %s is not in the future", s.ExpiresAt.Format(time.RFC3339))
	case len(s.LineItems) != len(items):
		return fmt.Errorf("%d line items for %d items", len(s.LineItems), len(items))
	}
	if err := checkPaymentMethods(s.PaymentProvider.SupportedPaymentMethods); err != nil {
		return err
	}
	for i, li := range s.LineItems {
		if li.Item != items[i] {
			return fmt.Errorf("line_items[%d].item %+v, want %+v", i, li.Item, items[i])
		}
	}
	return sessionIdentities(s)
}

// checkPaymentMethods checks payment_provider.supported_payment_methods as
// ChatGPT's Checkout API reference shows it: objects, a card among them
// with the brands it takes.
func checkPaymentMethods(methods []contract.PaymentMethod) error {
	for i, m := range methods {
		if m.Type != "card" {
			continue
		}
		if len(m.AllowedCardBrands) == 0 {
			return fmt.Errorf("payment_provider.supported_payment_methods[%d]: a card without allowed_card_brands", i)
		}
		for _, b := range m.AllowedCardBrands {
			if b == "" || strings.ToLower(b) != b {
				return fmt.Errorf("payment_provider.supported_payment_methods[%d].allowed_card_brands: %q, want a lower-case brand such as visa", i, b)
			}
		}
		return nil
	}
	return fmt.Errorf("payment_provider.supported_payment_methods %+v: no {\"type\": \"card\"}", methods)
}

// checkLinks checks the legal links a ready session must carry: the
// policy's pages, and support_url, the same URL as support.
func checkLinks(links []contract.Link) error {
	byType := map[string]string{}
	for _, l := range links {
		if _, ok := byType[l.Type]; !ok {
			byType[l.Type] = l.URL
		}
	}
	for _, want := range []string{"terms_of_use", "privacy_policy", "return_policy", "support", "support_url"} {
		if byType[want] == "" {
			return fmt.Errorf("links: no %s", want)
		}
	}
	if byType["support_url"] != byType["support"] {
		return fmt.Errorf("links: support_url %q is not support's %q", byType["support_url"], byType["support"])
	}
	return nil
}

// totalOf is the amount of the total of type t, 0 when it is not listed.
func totalOf(ts []contract.Total, t contract.TotalType) int64 {
	for _, x := range ts {
		if x.Type == t {
			return x.Amount
		}
	}
	return 0
}

func sameTotals(a, b []contract.Total) bool { return slices.Equal(a, b) }

// lineIdentities checks the line identities of docs/buying.md.
func lineIdentities(where string, lines []contract.LineItem) error {
	for i, l := range lines {
		switch {
		case l.UnitAmount < 0 || l.Item.Quantity < 1 || l.BaseAmount < 0 || l.Discount < 0 || l.Subtotal < 0 || l.Tax < 0 || l.Total < 0:
			return fmt.Errorf("%s[%d]: a negative amount or no quantity: %+v", where, i, l)
		case l.BaseAmount != l.UnitAmount*l.Item.Quantity:
			return fmt.Errorf("%s[%d]: base_amount %d ≠ unit_amount %d × quantity %d", where, i, l.BaseAmount, l.UnitAmount, l.Item.Quantity)
		case l.Subtotal != l.BaseAmount-l.Discount:
			return fmt.Errorf("%s[%d]: subtotal %d ≠ base_amount %d − discount %d", where, i, l.Subtotal, l.BaseAmount, l.Discount)
		case l.Total != l.Subtotal+l.Tax:
			return fmt.Errorf("%s[%d]: total %d ≠ subtotal %d + tax %d", where, i, l.Total, l.Subtotal, l.Tax)
		}
	}
	return nil
}

// totalsIdentities checks the totals identities of docs/buying.md; option
// is the chosen fulfillment option, nil when none is chosen. Where shipping
// is taxed, the contract's identities read literally count its tax twice
// (fulfillment = the option's total, and tax = Σ line tax + option tax); the
// shop counts it once, in tax, with fulfillment = the option's subtotal
// (equal to its total where shipping is not taxed), and so does this check.
func totalsIdentities(lines []contract.LineItem, totals []contract.Total, option *contract.FulfillmentOption) error {
	seen := map[contract.TotalType]bool{}
	for _, t := range totals {
		if seen[t.Type] {
			return fmt.Errorf("totals: %s listed twice", t.Type)
		}
		seen[t.Type] = true
	}
	for _, t := range []contract.TotalType{contract.TotalItemsBase, contract.TotalSubtotal, contract.TotalTotal} {
		if !seen[t] {
			return fmt.Errorf("totals: no %s", t)
		}
	}
	var base, discount, tax int64
	for _, l := range lines {
		base, discount, tax = base+l.BaseAmount, discount+l.Discount, tax+l.Tax
	}
	var shipping int64
	if option != nil {
		if option.Total != option.Subtotal+option.Tax {
			return fmt.Errorf("fulfillment option %s: total %d ≠ subtotal %d + tax %d", option.ID, option.Total, option.Subtotal, option.Tax)
		}
		shipping, tax = option.Subtotal, tax+option.Tax
	}
	get := func(t contract.TotalType) int64 { return totalOf(totals, t) }
	for _, c := range []struct {
		t    contract.TotalType
		want int64
		how  string
	}{
		{contract.TotalItemsBase, base, "Σ base_amount"},
		{contract.TotalItemsDiscount, discount, "Σ line discount"},
		{contract.TotalSubtotal, get(contract.TotalItemsBase) - get(contract.TotalItemsDiscount), "items_base_amount − items_discount"},
		{contract.TotalFulfillment, shipping, "the chosen option's subtotal"},
		{contract.TotalTax, tax, "Σ line tax + option tax"},
		{contract.TotalTotal, get(contract.TotalSubtotal) - get(contract.TotalDiscount) + get(contract.TotalFulfillment) + get(contract.TotalTax), "subtotal − discount + fulfillment + tax"},
	} {
		if got := get(c.t); got != c.want {
			return fmt.Errorf("totals: %s %d ≠ %s = %d", c.t, got, c.how, c.want)
		}
	}
	for _, t := range totals {
		if t.Amount < 0 {
			return fmt.Errorf("totals: %s is negative (%d)", t.Type, t.Amount)
		}
	}
	return nil
}

// sessionIdentities checks docs/buying.md's identities on a session.
func sessionIdentities(s contract.Session) error {
	if err := lineIdentities("line_items", s.LineItems); err != nil {
		return err
	}
	var option *contract.FulfillmentOption
	if s.FulfillmentOptionID != "" {
		i := slices.IndexFunc(s.FulfillmentOptions, func(o contract.FulfillmentOption) bool { return o.ID == s.FulfillmentOptionID })
		if i < 0 {
			return fmt.Errorf("fulfillment_option_id %q is not one of the fulfillment_options", s.FulfillmentOptionID)
		}
		option = &s.FulfillmentOptions[i]
	}
	return totalsIdentities(s.LineItems, s.Totals, option)
}

// receiptIdentities checks docs/buying.md's identities on a receipt.
func receiptIdentities(r contract.Receipt) error {
	if err := lineIdentities("line_items", r.LineItems); err != nil {
		return err
	}
	return totalsIdentities(r.LineItems, r.Totals, r.FulfillmentOption)
}

// receiptMatches checks a receipt against the session it was paid from.
func receiptMatches(r contract.Receipt, s contract.Session) error {
	var chosen *contract.FulfillmentOption
	for i := range s.FulfillmentOptions {
		if s.FulfillmentOptions[i].ID == s.FulfillmentOptionID {
			chosen = &s.FulfillmentOptions[i]
		}
	}
	switch {
	case !reflect.DeepEqual(r.LineItems, withoutDescriptions(s.LineItems)):
		return fmt.Errorf("line_items %+v, the session's %+v", r.LineItems, s.LineItems)
	case !sameTotals(r.Totals, s.Totals):
		return fmt.Errorf("totals %v, the session's %v", r.Totals, s.Totals)
	case r.FulfillmentOption == nil || chosen == nil || r.FulfillmentOption.ID != chosen.ID || r.FulfillmentOption.Total != chosen.Total:
		return fmt.Errorf("fulfillment_option %+v, the session chose %+v", r.FulfillmentOption, chosen)
	case r.FulfillmentAddress == nil || *r.FulfillmentAddress != *s.FulfillmentAddress:
		return fmt.Errorf("fulfillment_address %+v, the session's %+v", r.FulfillmentAddress, s.FulfillmentAddress)
	case r.Email != strings.ToLower(s.Buyer.Email):
		return fmt.Errorf("email %q, the buyer's %q", r.Email, s.Buyer.Email)
	case r.Currency != s.Currency:
		return fmt.Errorf("currency %q, the session's %q", r.Currency, s.Currency)
	case r.Payment.Mode != string(s.PaymentMode) || r.Payment.Status != contract.PaymentSucceeded || r.Payment.Reference == "":
		return fmt.Errorf("payment %+v, want a succeeded %s-mode payment with a reference", r.Payment, s.PaymentMode)
	case !reflect.DeepEqual(r.Links, s.Links):
		return fmt.Errorf("links %v, the session showed %v", r.Links, s.Links)
	}
	return nil
}

// sameReceipt compares two answers for the same receipt.
func sameReceipt(a, b contract.Receipt) error {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return fmt.Errorf("created_at %s and %s", a.CreatedAt, b.CreatedAt)
	}
	a.CreatedAt = b.CreatedAt
	if !reflect.DeepEqual(a, b) {
		x, _ := json.Marshal(a)
		y, _ := json.Marshal(b)
		return fmt.Errorf("%s\nand\n%s", x, y)
	}
	return nil
}

// messagesText is a session's messages for a report line.
func messagesText(ms []contract.Message) string {
	if len(ms) == 0 {
		return "none"
	}
	var parts []string
	for _, m := range ms {
		s := string(m.Type)
		if m.Code != "" {
			s += " " + m.Code
		}
		if m.Param != "" {
			s += " " + m.Param
		}
		parts = append(parts, s+": "+m.Content)
	}
	return strings.Join(parts, "; ")
}

// withoutDescriptions is a session's lines as its receipt repeats them: the
// product's description is for the payment sheet and stays on the session.
func withoutDescriptions(lines []contract.LineItem) []contract.LineItem {
	out := slices.Clone(lines)
	for i := range out {
		out[i].Description = ""
	}
	return out
}
