package orders

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop/money"
)

// SurplusPaymentRecord is a payment for the order's checkout session that
// no order took (the session was paid twice, or paid after it ended or
// changed), as staff see it in get_order, with its refund: every surplus
// payment is refunded in full.
type SurplusPaymentRecord struct {
	ID     string      `json:"id"`
	Amount money.Price `json:"amount"`
	// Provider is stripe or sandbox; Reference is its id of the payment.
	Provider  string `json:"provider"`
	Reference string `json:"reference"`
	// Reason says why no order took the payment.
	Reason    string        `json:"reason"`
	Refund    SurplusRefund `json:"refund"`
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
}

// SurplusRefund is the refund of a surplus payment: status pending (not
// made yet, or its outcome unknown: the reconciler tries again), refunded
// or failed (the provider refused: refund it by hand), the provider's
// reference of the refund and what the provider said.
type SurplusRefund struct {
	Status    string `json:"status"`
	Reference string `json:"reference"`
	Message   string `json:"message"`
}

// surplusRecordRow is what get_order reads of a row of surplus_payments (a
// table checkout writes).
type surplusRecordRow struct {
	ID              string
	Provider        string
	Reference       string
	Amount          int64
	Currency        string
	Reason          string
	Status          string
	RefundReference string
	Message         string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// surplusPayments reads the surplus payments of a checkout session, oldest
// first.
func surplusPayments(ctx context.Context, db *gorm.DB, sessionID string) ([]SurplusPaymentRecord, error) {
	rows, err := sessionRows[surplusRecordRow](ctx, db, "surplus_payments",
		"id, provider, reference, amount, currency, reason, status, refund_reference, message, created_at, updated_at", "created_at, id", sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]SurplusPaymentRecord, 0, len(rows))
	for _, r := range rows {
		out = append(out, SurplusPaymentRecord{
			ID: r.ID, Amount: PriceOf(r.Currency, r.Amount), Provider: r.Provider, Reference: r.Reference, Reason: r.Reason,
			Refund:    SurplusRefund{Status: r.Status, Reference: r.RefundReference, Message: r.Message},
			CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		})
	}
	return out, nil
}

// surplusText is a surplus payment's line of get_order's text, such as
// "Surplus payment sp_… of $12.00 (stripe pi_…): the session was already
// paid; refund refunded (re_…)."
func surplusText(s SurplusPaymentRecord) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Surplus payment %s of %s (%s %s): %s; refund %s", s.ID, s.Amount.Display, s.Provider, s.Reference, s.Reason, s.Refund.Status)
	if s.Refund.Reference != "" {
		fmt.Fprintf(&sb, " (%s)", s.Refund.Reference)
	}
	if s.Refund.Status == "failed" {
		fmt.Fprintf(&sb, ": %s; refund it by hand", s.Refund.Message)
	}
	sb.WriteString(".")
	return sb.String()
}
