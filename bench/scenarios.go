package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/purchase"
)

// The scenarios of `shop bench` against the shop: the purchase flow and
// complete_checkout alone (search_products with varied queries is in
// search.go).

// benchSetupPages is how many pages of 50 products the setup browses to
// learn the catalog's words and categories, and to find stock to buy.
const benchSetupPages = 8

// benchProduct is what the setup reads of a search result.
type benchProduct struct {
	id, title, category string
	inStock             bool
}

// summaries reads search_products' products from a result.
func summaries(res *mcp.CallToolResult) []benchProduct {
	list, _ := structuredField(res, "products").([]any)
	out := make([]benchProduct, 0, len(list))
	for _, p := range list {
		m, _ := p.(map[string]any)
		var s benchProduct
		s.id, _ = m["id"].(string)
		s.title, _ = m["title"].(string)
		s.category, _ = m["category"].(string)
		s.inStock, _ = m["in_stock"].(bool)
		out = append(out, s)
	}
	return out
}

// item, buyer and address are the contract's shapes (docs/buying.md) as
// the bench sends them.
type (
	item struct {
		ID       string `json:"id"`
		Quantity int64  `json:"quantity"`
	}
	buyer struct {
		Name  string `json:"name,omitempty"`
		Email string `json:"email"`
	}
	address struct {
		Name       string `json:"name"`
		LineOne    string `json:"line_one"`
		City       string `json:"city"`
		State      string `json:"state"`
		Country    string `json:"country"`
		PostalCode string `json:"postal_code"`
	}
)

// The statuses of a session the bench waits for.
const (
	statusReady     = "ready_for_payment"
	statusCompleted = "completed"
)

// The buyer and address of every bench purchase: an address in California,
// which the demo policy ships to and taxes (the purchase command's).
var (
	benchBuyer   = buyer{Name: "Bench Buyer", Email: "bench@example.com"}
	benchAddress = address{
		Name: "Purchase Check", LineOne: "1 Market St", City: "San Francisco",
		State: "CA", Country: "US", PostalCode: "94105",
	}
)

// benchPoolSize bounds the variants the purchase flows choose from: enough
// that concurrent flows rarely hold the same row. They are the ones with
// the most units among the first benchCandidates with 20 or more, so that a
// run does not sell them out: a flow refused for stock measures the
// refusal, not the purchase.
const (
	benchPoolSize   = 200
	benchCandidates = 4 * benchPoolSize
)

// purchaseScenario runs the three-call purchase: create_checkout_session,
// update_checkout_session with the address and the shipping option,
// complete_checkout with pm_card_visa; every flow a new session of items
// lines, one unit each of variants drawn from a pool found in stock.
type purchaseScenario struct {
	items  int
	pool   []string // variant ids with stock
	option string   // the first shipping option for benchAddress
}

func (s *purchaseScenario) unit() (string, int) { return "flows", flowCalls }

func (s *purchaseScenario) setup(ctx context.Context, c *benchClient) error {
	r := newRecorder(nil)
	type candidate struct {
		id    string
		units float64
	}
	var found []candidate
	err := c.browse(ctx, r, map[string]any{"in_stock_only": true}, func(res *mcp.CallToolResult) (bool, error) {
		for _, p := range summaries(res) {
			if p.id == "" || !p.inStock || len(found) >= benchCandidates {
				continue
			}
			res, ok := c.call(ctx, r, "get_product", map[string]any{"product_id": p.id})
			if !ok {
				return false, fmt.Errorf("bench: setup: get_product: %s", r.firstError())
			}
			prod, _ := structuredField(res, "product").(map[string]any)
			variants, _ := prod["variants"].([]any)
			for _, v := range variants {
				vm, _ := v.(map[string]any)
				id, _ := vm["id"].(string)
				if avail, _ := vm["available"].(float64); avail >= 20 && id != "" {
					found = append(found, candidate{id, avail})
				}
			}
		}
		return len(found) < benchCandidates, nil
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(found, func(a, b candidate) int { return cmp.Compare(b.units, a.units) })
	for _, f := range found[:min(len(found), benchPoolSize)] {
		s.pool = append(s.pool, f.id)
	}
	if len(s.pool) < s.items {
		return fmt.Errorf("%w: found %d variants with 20 units or more, want at least %d (--items)", errNoWork, len(s.pool), s.items)
	}
	// The shipping option: from a session that is then canceled.
	id, ok := s.create(ctx, c, r, s.pool[:s.items])
	if !ok {
		return fmt.Errorf("bench: setup: %s", r.firstError())
	}
	defer c.call(context.WithoutCancel(ctx), r, "cancel_checkout_session", map[string]any{"checkout_session_id": id})
	res, ok := c.call(ctx, r, "update_checkout_session", map[string]any{"checkout_session_id": id, "fulfillment_address": benchAddress})
	if !ok {
		return fmt.Errorf("bench: setup: %s", r.firstError())
	}
	opts, _ := structuredField(res, "fulfillment_options").([]any)
	if len(opts) == 0 {
		return fmt.Errorf("%w: no shipping option for %s, %s", errNoWork, benchAddress.City, benchAddress.Country)
	}
	first, _ := opts[0].(map[string]any)
	s.option, _ = first["id"].(string)
	return nil
}

// cart draws s.items distinct variants.
func (s *purchaseScenario) cart(c *benchClient) []string {
	ids := make([]string, 0, s.items)
	for _, i := range c.rng.Perm(len(s.pool))[:s.items] {
		ids = append(ids, s.pool[i])
	}
	return ids
}

func (s *purchaseScenario) create(ctx context.Context, c *benchClient, r *recorder, variants []string) (string, bool) {
	items := make([]item, len(variants))
	for i, v := range variants {
		items[i] = item{ID: v, Quantity: 1}
	}
	// The buyer of each session is a new one, its email with it (the host
	// user of c.call's _meta): one email for every flow would make all the
	// clients one person to the shop's per-buyer limits, whose sessions
	// each new one reads and may take stock from.
	b := benchBuyer
	b.Email = fmt.Sprintf("bench-%d-%d@example.com", c.id, c.buyers+1)
	res, ok := c.call(ctx, r, "create_checkout_session", map[string]any{"items": items, "buyer": b})
	if !ok {
		return "", false
	}
	id, _ := structuredField(res, "id").(string)
	if id == "" {
		r.fail("unexpected: no session id", "create_checkout_session", purchase.ResultText(res))
		return "", false
	}
	return id, true
}

// ready creates a session and makes it ready for payment; a session left
// unready is canceled so that it holds no stock.
func (s *purchaseScenario) ready(ctx context.Context, c *benchClient, r *recorder) (string, bool) {
	id, ok := s.create(ctx, c, r, s.cart(c))
	if !ok {
		return "", false
	}
	res, ok := c.call(ctx, r, "update_checkout_session", map[string]any{
		"checkout_session_id": id, "fulfillment_address": benchAddress, "fulfillment_option_id": s.option,
	})
	if ok {
		if st, _ := structuredField(res, "status").(string); st != statusReady {
			r.fail("unexpected: status "+st, "update_checkout_session", purchase.ResultText(res))
			ok = false
		}
	}
	if !ok {
		c.call(context.WithoutCancel(ctx), newRecorder(nil), "cancel_checkout_session", map[string]any{"checkout_session_id": id})
		return "", false
	}
	return id, true
}

// pay completes a ready session with pm_card_visa and checks the order.
func (s *purchaseScenario) pay(ctx context.Context, c *benchClient, r *recorder, id string) bool {
	res, ok := c.call(ctx, r, "complete_checkout", map[string]any{
		"checkout_session_id": id, "buyer": nil,
		"payment_data": map[string]any{"token": "pm_card_visa", "provider": "stripe"},
	})
	if !ok {
		return false
	}
	st, _ := structuredField(res, "status").(string)
	if order, _ := structuredField(res, "order").(map[string]any); st != statusCompleted || order["id"] == nil {
		r.fail("unexpected: status "+st+" without an order", "complete_checkout", purchase.ResultText(res))
		return false
	}
	return true
}

func (s *purchaseScenario) iterate(ctx context.Context, c *benchClient, r *recorder) bool {
	start := time.Now()
	id, ok := s.ready(ctx, c, r)
	if ok && s.pay(ctx, c, r, id) {
		r.observe("flow", time.Since(start))
		r.done()
	}
	return true
}

// completeScenario measures complete_checkout alone: the first stage
// readies sessions (create and update), the measured one pays them, so that
// the server's CPU time in the window is complete_checkout's.
type completeScenario struct{ purchaseScenario }

func (s *completeScenario) unit() (string, int) { return "calls", 1 }

func (s *completeScenario) iterate(ctx context.Context, c *benchClient, r *recorder) bool {
	if id, ok := s.ready(ctx, c, r); ok {
		c.ready = append(c.ready, id)
	}
	return true
}

func (s *completeScenario) finish(ctx context.Context, c *benchClient, r *recorder) bool {
	if len(c.ready) == 0 {
		return false
	}
	id := c.ready[len(c.ready)-1]
	c.ready = c.ready[:len(c.ready)-1]
	if s.pay(ctx, c, r, id) {
		r.done()
	}
	return true
}

// firstError describes one error r holds, for a setup that failed.
func (r *recorder) firstError() string {
	for _, e := range r.errs {
		return fmt.Sprintf("%s: %s: %s", e.Step, e.Kind, e.Example)
	}
	return "no answer"
}
