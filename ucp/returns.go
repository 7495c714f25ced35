package ucp

import (
	"time"

	"shop/contract"
)

// Adjustment is a post-order event (types/adjustment.json): here a return
// the buyer started, with the units it takes back (negative quantities)
// and the money it gives back (a negative total).
type Adjustment struct {
	ID          string           `json:"id"`
	Type        string           `json:"type"`
	OccurredAt  time.Time        `json:"occurred_at"`
	Status      string           `json:"status"`
	LineItems   []AdjustmentLine `json:"line_items,omitempty"`
	Totals      []Total          `json:"totals,omitempty"`
	Description string           `json:"description,omitempty"`
}

// AdjustmentLine is a quantity of an order line an adjustment changes.
type AdjustmentLine struct {
	ID       string `json:"id"`
	Quantity int64  `json:"quantity"`
}

// adjustments are an order's returns as UCP adjustments.
func adjustments(r contract.Receipt) []Adjustment {
	var out []Adjustment
	for _, x := range r.Returns {
		a := Adjustment{ID: x.ID, Type: "return", OccurredAt: x.UpdatedAt.UTC(), Status: x.AdjustmentStatus(),
			Totals: []Total{{Type: "total", Amount: -x.RefundAmount}}, Description: x.Status + ": " + x.Reason}
		if x.RejectReason != "" {
			a.Description += " (" + x.RejectReason + ")"
		}
		for _, l := range x.Lines {
			a.LineItems = append(a.LineItems, AdjustmentLine{ID: l.LineItemID, Quantity: -l.Quantity})
		}
		out = append(out, a)
	}
	return out
}

// returnPolicy is the shop's return policy as UCP carries it on catalog,
// checkout and order answers (dev.ucp.shopping.policy.return), from
// Options.ReturnPolicy; nil when there is none.
func (u *UCP) returnPolicy() []Policy {
	if u.returns.Description == "" {
		return nil
	}
	return []Policy{{Type: policyReturn, Description: Description{Plain: u.returns.Description}, URL: u.returns.URL}}
}

// withReturns gives the return policy of ps the shop's own description
// when it has one.
func (u *UCP) withReturns(ps []Policy) []Policy {
	if u.returns.Description == "" {
		return ps
	}
	for i := range ps {
		if ps[i].Type == policyReturn {
			ps[i].Description = Description{Plain: u.returns.Description}
		}
	}
	return ps
}

// ReturnPolicy is the shop's return policy for agents: a description any
// platform can show and its page.
type ReturnPolicy struct {
	Description, URL string
}
