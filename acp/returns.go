package acp

import (
	"time"

	"shop/contract"
)

// Adjustment is a post-order change (the Adjustment of the 2026-04-17
// order): here a return the buyer started, with its units and the amount
// it credits the buyer.
type Adjustment struct {
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	OccurredAt  time.Time `json:"occurred_at"`
	Status      string    `json:"status"`
	LineItems   []LineRef `json:"line_items,omitempty"`
	Amount      int64     `json:"amount"`
	Currency    string    `json:"currency"`
	Reason      string    `json:"reason,omitempty"`
	Description string    `json:"description,omitempty"`
}

// LineRef is a LineItemReference: a quantity of one order line.
type LineRef struct {
	ID       string `json:"id"`
	Quantity int64  `json:"quantity"`
}

// adjustments are the order's returns as ACP adjustments.
func adjustments(r contract.Receipt) []Adjustment {
	var out []Adjustment
	for _, x := range r.Returns {
		a := Adjustment{ID: x.ID, Type: "return", OccurredAt: x.UpdatedAt.UTC(), Status: x.AdjustmentStatus(),
			Amount: x.RefundAmount, Currency: r.Currency, Reason: x.Reason, Description: "return " + x.Status}
		if x.RejectReason != "" {
			a.Description += ": " + x.RejectReason
		}
		for _, l := range x.Lines {
			a.LineItems = append(a.LineItems, LineRef{ID: l.LineItemID, Quantity: l.Quantity})
		}
		out = append(out, a)
	}
	return out
}
