package payments

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"shop"
	"shop/database"
)

// The sandbox's saved cards: its customers are ids only (the wallet keeps
// them), and its attached payment methods rows of sandbox_payment_methods
// with the test card behind each, so that a saved card pays as that test
// card does: pm_card_authenticationRequired, saved and charged off-session,
// needs the buyer's authentication (requires_action), as at Stripe.

const sandboxMethodPrefix = "pm_sandbox_"

func (s *Sandbox) newCustomer(context.Context, string, string) (string, error) {
	return shop.NewID("cus_sandbox_"), nil
}

// attach saves a test card for customer as a new payment method.
func (s *Sandbox) attach(ctx context.Context, customer, token string) (*SavedCard, error) {
	c, ok := FindTestCard(token)
	if !ok {
		_, err := sandboxCard(token)
		if err == nil {
			err = shop.Errorf(shop.Invalid, "$.payment_data.token", "the sandbox saves only Stripe's test cards (pm_card_visa, …)")
		}
		return nil, err
	}
	if c.Outcome == Declined {
		// Stripe checks the card when it is attached: a card it declines
		// is not saved.
		return nil, shop.Errorf(shop.Invalid, "$.payment_data.token", "%s", buyerMessage(c.Code(), c.Message))
	}
	id := shop.NewID(sandboxMethodPrefix)
	now := s.now().UTC()
	_, err := database.Insert(s.db.WithContext(ctx), "sandbox_payment_methods", []string{"id", "customer_id", "test_card", "created_at"},
		[]any{id, customer, c.Method, now})
	if err != nil {
		return nil, fmt.Errorf("sandbox attach payment method: %w", err)
	}
	return &SavedCard{ID: id, Customer: customer, Brand: c.Brand, Last4: c.Last4, ExpMonth: 12, ExpYear: 2034, CreatedAt: now}, nil
}

// detach detaches a saved payment method from its customer.
func (s *Sandbox) detach(ctx context.Context, id string) error {
	if _, err := database.Exec(s.db.WithContext(ctx), "UPDATE sandbox_payment_methods SET customer_id = '' WHERE id = ?", id); err != nil {
		return fmt.Errorf("sandbox detach payment method %s: %w", id, err)
	}
	return nil
}

// deleteCustomer detaches every payment method of customer (the sandbox
// keeps no customer rows of its own).
func (s *Sandbox) deleteCustomer(ctx context.Context, customer string) error {
	if _, err := database.Exec(s.db.WithContext(ctx), "UPDATE sandbox_payment_methods SET customer_id = '' WHERE customer_id = ?", customer); err != nil {
		return fmt.Errorf("sandbox delete customer %s: %w", customer, err)
	}
	return nil
}

// card is the test card a charge pays with: a saved card's (which must be
// attached to the charge's customer, as Stripe requires), else the token's.
func (s *Sandbox) card(ctx context.Context, r Request) (TestCard, error) {
	if !strings.HasPrefix(r.Token, sandboxMethodPrefix) {
		if r.Customer != "" {
			return TestCard{}, shop.Errorf(shop.Invalid, "$.payment_data.token", "not a saved card of this customer")
		}
		return sandboxCard(r.Token)
	}
	var row struct {
		CustomerID string
		TestCard   string
	}
	err := s.db.WithContext(ctx).Table("sandbox_payment_methods").Select("customer_id, test_card").Where("id = ?", r.Token).Take(&row).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return TestCard{}, shop.Errorf(shop.Invalid, "$.payment_data.token", "the sandbox has no payment method %s", r.Token)
	case err != nil:
		return TestCard{}, fmt.Errorf("sandbox payment method %s: %w", r.Token, err)
	case row.CustomerID == "" || row.CustomerID != r.Customer:
		return TestCard{}, shop.Errorf(shop.Invalid, "$.payment_data.token",
			"this saved card is not attached to the paying buyer's customer: pay with one of your own saved cards or a new card")
	}
	c, ok := FindTestCard(row.TestCard)
	if !ok {
		return TestCard{}, fmt.Errorf("sandbox payment method %s: unknown test card %s", r.Token, row.TestCard)
	}
	return c, nil
}
