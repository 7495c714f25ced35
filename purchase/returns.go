package purchase

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/contract"
)

// A run with --return (Options.Return) goes on after the purchase as the
// buyer and the shop's staff would (docs/returns.md): staff ship the order
// at /admin/mcp with an owner token (SHOP_ADMIN_TOKEN), the buyer returns
// all of it with request_return, a second request for the same units is
// refused, staff accept the return in two steps (the refund), and get_order
// shows the return refunded.

// adminEndpoint is the staff's MCP endpoint beside the buyers' url.
func adminEndpoint(url string) string {
	return strings.TrimSuffix(strings.TrimRight(url, "/"), "/mcp") + "/admin/mcp"
}

// returnRun is the state of the return steps.
type returnRun struct {
	admin  *mcp.ClientSession
	id     string
	refund int64
}

// returns runs the return steps after a placed order.
func (p *purchaser) returns(ctx context.Context) {
	var r returnRun
	if !p.step("admin: fulfill_order", func() (string, error) { return p.ship(ctx, &r) }) {
		return
	}
	defer r.admin.Close()
	if !p.step("request_return", func() (string, error) { return p.requestReturn(ctx, &r) }) {
		return
	}
	p.step("request_return: again", func() (string, error) { return p.returnTwice(ctx) })
	if !p.step("admin: accept_return", func() (string, error) { return p.acceptReturn(ctx, &r) }) {
		return
	}
	p.step("get_order: returns", func() (string, error) { return p.returned(ctx, &r) })
}

// ship connects to /admin/mcp and ships the whole order.
func (p *purchaser) ship(ctx context.Context, r *returnRun) (string, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "shop-purchase-staff", Version: p.o.Version}, nil)
	hc := &http.Client{Transport: withBearer{p.o.AdminToken, p.http.Transport}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: adminEndpoint(p.o.URL), HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return "", fmt.Errorf("initialize %s: %w", adminEndpoint(p.o.URL), err)
	}
	r.admin = cs
	var out struct{ Status string }
	if err := p.adminCall(ctx, r, "fulfill_order", map[string]any{"order_id": p.done.Order.ID, "carrier": "USPS", "tracking_number": "9400100000000000000001"}, &out); err != nil {
		return "", err
	}
	if out.Status != "shipped" {
		return "", fmt.Errorf("status %q after shipping every line, want shipped", out.Status)
	}
	return "order " + p.done.Order.ID + " shipped", nil
}

// adminCall calls a staff tool and decodes its structured content.
func (p *purchaser) adminCall(ctx context.Context, r *returnRun, name string, args, out any) error {
	res, err := r.admin.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if res.IsError {
		return fmt.Errorf("%s answered isError: %s", name, ResultText(res))
	}
	return decodeResult(res, out)
}

// returnLines are every unit of the order, as request_return takes them.
func (p *purchaser) returnLines() ([]map[string]any, int64) {
	var lines []map[string]any
	var sum int64
	for _, li := range p.done.Order.Receipt.LineItems {
		lines = append(lines, map[string]any{"line_item_id": li.ID, "quantity": li.Item.Quantity})
		sum += li.Total
	}
	return lines, sum
}

// requestReturn returns every unit of the order.
func (p *purchaser) requestReturn(ctx context.Context, r *returnRun) (string, error) {
	lines, sum := p.returnLines()
	var out struct {
		Return struct {
			contract.Return
			Instructions string `json:"instructions"`
		} `json:"return"`
	}
	_, err := p.call(ctx, "request_return", map[string]any{"order_id": p.done.Order.ID, "email": p.done.Order.Receipt.Email,
		"lines": lines, "reason": "no_longer_needed", "note": "shop purchase --return"}, &out)
	if err != nil {
		return "", err
	}
	got := out.Return
	switch {
	case got.Status != "requested" || !strings.HasPrefix(got.ID, "ret_"):
		return "", fmt.Errorf("return %q status %q, want ret_… requested", got.ID, got.Status)
	case got.RefundAmount < 0 || got.RefundAmount > sum:
		return "", fmt.Errorf("refund_amount %d, want from 0 to the lines' total %d", got.RefundAmount, sum)
	case strings.TrimSpace(got.Instructions) == "":
		return "", errors.New("no instructions: the buyer is not told where to send the parcel")
	}
	r.id, r.refund = got.ID, got.RefundAmount
	return fmt.Sprintf("%s requested: %s back on receipt; %s", got.ID, p.cur.Format(got.RefundAmount), got.Instructions), nil
}

// returnTwice asks to return the same units again: refused, naming the quantity.
func (p *purchaser) returnTwice(ctx context.Context) (string, error) {
	lines, _ := p.returnLines()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "request_return", Arguments: map[string]any{
		"order_id": p.done.Order.ID, "email": p.done.Order.Receipt.Email, "lines": lines, "reason": "other"}})
	if err != nil {
		return "", err
	}
	if !res.IsError || !strings.Contains(ResultText(res), "$.lines[0].quantity") {
		return "", fmt.Errorf("a second return of the same units answered %q, want a refusal naming $.lines[0].quantity", ResultText(res))
	}
	return "refused: " + ResultText(res), nil
}

// acceptReturn has staff accept the return: the preview, then the refund.
func (p *purchaser) acceptReturn(ctx context.Context, r *returnRun) (string, error) {
	var prev struct{ Confirm string }
	if err := p.adminCall(ctx, r, "accept_return", map[string]any{"return_id": r.id}, &prev); err != nil {
		return "", err
	}
	var out struct {
		Status   string `json:"status"`
		RefundID string `json:"refund_id"`
	}
	if err := p.adminCall(ctx, r, "accept_return", map[string]any{"return_id": r.id, "confirm": prev.Confirm}, &out); err != nil {
		return "", err
	}
	if out.Status != "refunded" {
		return "", fmt.Errorf("accepted return %s is %q, want refunded", r.id, out.Status)
	}
	return fmt.Sprintf("%s accepted, %s refunded (%s)", r.id, p.cur.Format(r.refund), out.RefundID), nil
}

// returned checks the buyer's get_order shows the return refunded.
func (p *purchaser) returned(ctx context.Context, r *returnRun) (string, error) {
	var out struct {
		Order contract.Receipt `json:"order"`
	}
	if _, err := p.call(ctx, "get_order", map[string]any{"order_id": p.done.Order.ID, "email": p.done.Order.Receipt.Email}, &out); err != nil {
		return "", err
	}
	for _, x := range out.Order.Returns {
		if x.ID == r.id {
			if x.Status != "refunded" || x.RefundAmount != r.refund {
				return "", fmt.Errorf("return %s is %s of %d, want refunded of %d", x.ID, x.Status, x.RefundAmount, r.refund)
			}
			return fmt.Sprintf("returns[] shows %s refunded, %s", x.ID, p.cur.Format(x.RefundAmount)), nil
		}
	}
	return "", fmt.Errorf("get_order's returns %+v have no %s", out.Order.Returns, r.id)
}
