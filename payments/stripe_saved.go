package payments

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stripe/stripe-go/v82"

	"shop"
)

// Stripe's side of saved cards: a Customer per linked account (metadata
// account_id), PaymentMethods attached to it and detached from it.

// newCustomer creates the account's Customer. The idempotency key is the
// account's, so that racing first uses make one customer.
func (s *Stripe) newCustomer(ctx context.Context, accountID, email string) (string, error) {
	p := &stripe.CustomerCreateParams{Email: optional(email)}
	p.AddMetadata("account_id", accountID)
	key := "shop_customer_" + accountID
	p.SetIdempotencyKey(key)
	var c *stripe.Customer
	err := s.do(ctx, "create customer", key, func() error {
		var err error
		c, err = s.client.V1Customers.Create(ctx, p)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("stripe: create customer: %s", s.describe(err))
	}
	return c.ID, nil
}

// attach attaches the payment method token to customer.
func (s *Stripe) attach(ctx context.Context, customer, token string) (*SavedCard, error) {
	p := &stripe.PaymentMethodAttachParams{Customer: stripe.String(customer)}
	key := shop.NewID("shop_attach_")
	p.SetIdempotencyKey(key)
	var pm *stripe.PaymentMethod
	err := s.do(ctx, "attach payment method", key, func() error {
		var err error
		pm, err = s.client.V1PaymentMethods.Attach(ctx, token, p)
		return err
	})
	var se *stripe.Error
	switch {
	case err == nil:
	case errors.As(err, &se) && (se.Type == stripe.ErrorTypeCard || se.Type == stripe.ErrorTypeInvalidRequest):
		s.logger.WarnContext(ctx, "stripe refused to attach the payment method", "err", s.describe(se))
		return nil, shop.Errorf(shop.Invalid, "$.payment_data.token", "the payment provider did not save this card; pay without saving it, or with another card")
	default:
		return nil, fmt.Errorf("stripe: attach payment method: %s", s.describe(err))
	}
	if pm.Card == nil {
		return nil, shop.Errorf(shop.Invalid, "$.payment_data.token", "only cards are saved")
	}
	return &SavedCard{ID: pm.ID, Customer: customer, Brand: string(pm.Card.Brand), Last4: pm.Card.Last4,
		ExpMonth: int(pm.Card.ExpMonth), ExpYear: int(pm.Card.ExpYear), CreatedAt: time.Unix(pm.Created, 0).UTC()}, nil
}

// detach detaches a payment method from its customer; one detached
// already (or unknown to Stripe) counts as done.
func (s *Stripe) detach(ctx context.Context, id string) error {
	key := shop.NewID("shop_detach_")
	err := s.do(ctx, "detach payment method", key, func() error {
		_, err := s.client.V1PaymentMethods.Detach(ctx, id, &stripe.PaymentMethodDetachParams{})
		return err
	})
	var se *stripe.Error
	if err == nil || errors.As(err, &se) && (se.Code == stripe.ErrorCodeResourceMissing || se.Code == stripe.ErrorCodePaymentMethodUnexpectedState) {
		return nil
	}
	return fmt.Errorf("stripe: detach payment method: %s", s.describe(err))
}

// deleteCustomer deletes a Customer, which detaches its payment methods at
// Stripe; one deleted already (resource_missing) counts as done. A DELETE
// is idempotent by itself: Stripe ignores idempotency keys on it, so the
// key only names the request in the logs.
func (s *Stripe) deleteCustomer(ctx context.Context, id string) error {
	key := shop.NewID("shop_delete_customer_")
	err := s.do(ctx, "delete customer", key, func() error {
		_, err := s.client.V1Customers.Delete(ctx, id, &stripe.CustomerDeleteParams{})
		return err
	})
	var se *stripe.Error
	if err == nil || errors.As(err, &se) && se.Code == stripe.ErrorCodeResourceMissing {
		return nil
	}
	return fmt.Errorf("stripe: delete customer: %s", s.describe(err))
}

var (
	_ Vault = (*Stripe)(nil)
	_ Vault = (*Sandbox)(nil)
)
