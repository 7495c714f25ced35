package accounts

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"shop"
	"shop/contract"
)

// The buyer's saved cards (issue 48): cards saved with the merchant's
// payment provider on the payment page, which checkout sessions offer as
// payment_provider.managed_payment_methods.

// MyPaymentMethods is list_my_payment_methods' structured content, and
// remove_my_payment_method's: the cards, newest first.
type MyPaymentMethods struct {
	PaymentMethods []contract.ManagedPaymentMethod `json:"payment_methods"`
}

// PaymentMethodArgs name one of the buyer's saved cards.
type PaymentMethodArgs struct {
	PaymentMethodID string `json:"payment_method_id" jsonschema:"The saved card's id, as list_my_payment_methods lists it (\"pm_…\")."`
}

// RefineSchema bounds the id.
func (PaymentMethodArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["payment_method_id"].MinLength, s.Properties["payment_method_id"].MaxLength = jsonschema.Ptr(4), jsonschema.Ptr(255)
}

// cardTools are the saved cards' tools, none when the shop keeps no wallet.
func (d *Data) cardTools() []shop.Tool {
	if d.wallet == nil {
		return nil
	}
	pay := fmt.Sprintf(needsAccount, shop.ScopePayments)
	return []shop.Tool{
		shop.NewTool(shop.Tool{Name: "list_my_payment_methods", Auth: authFor("list_my_payment_methods"), Title: "List my saved cards",
			ReadOnly: true, Idempotent: true,
			Description: "The cards the buyer saved with the shop (on its payment page, with their consent), newest first: id, brand, " +
				"last four digits and expiry. A checkout session offers the same as payment_provider.managed_payment_methods; " +
				"complete_checkout pays with one when payment_data.token is its id." + pay,
		}, d.listMyPaymentMethods),
		shop.NewTool(shop.Tool{Name: "remove_my_payment_method", Auth: authFor("remove_my_payment_method"), Title: "Remove a saved card",
			Destructive: true, Idempotent: true,
			Description: "Remove one of the buyer's saved cards (payment_method_id from list_my_payment_methods), only when the buyer asks: " +
				"it is detached at the payment provider and no later checkout session offers it. Answers the cards left." + pay +
				" Errors: missing or invalid $.payment_method_id, not_found $.payment_method_id.",
		}, d.removeMyPaymentMethod),
	}
}

func (d *Data) listMyPaymentMethods(ctx context.Context, _ struct{}) (MyPaymentMethods, string, error) {
	b, err := linked(ctx, shop.ScopePayments)
	if err != nil {
		return MyPaymentMethods{}, "", err
	}
	return d.paymentMethods(ctx, b.AccountID, "")
}

func (d *Data) removeMyPaymentMethod(ctx context.Context, args PaymentMethodArgs) (MyPaymentMethods, string, error) {
	b, err := linked(ctx, shop.ScopePayments)
	if err != nil {
		return MyPaymentMethods{}, "", err
	}
	id := strings.TrimSpace(args.PaymentMethodID)
	if id == "" {
		return MyPaymentMethods{}, "", shop.Errorf(shop.Missing, "$.payment_method_id", "send the saved card's id, as list_my_payment_methods lists it")
	}
	if err := d.wallet.Remove(ctx, b.AccountID, id); err != nil {
		return MyPaymentMethods{}, "", err
	}
	return d.paymentMethods(ctx, b.AccountID, "Removed the card.")
}

// paymentMethods answers the account's saved cards, the text led by done.
func (d *Data) paymentMethods(ctx context.Context, accountID, done string) (MyPaymentMethods, string, error) {
	cards, err := d.wallet.Cards(ctx, accountID)
	if err != nil {
		return MyPaymentMethods{}, "", err
	}
	out := MyPaymentMethods{PaymentMethods: []contract.ManagedPaymentMethod{}}
	lines := []string{}
	if done != "" {
		lines = append(lines, done)
	}
	if len(cards) == 0 {
		lines = append(lines, "The buyer has no saved cards; one is saved on the shop's payment page when the buyer ticks \"Save this card for next time\".")
	}
	for _, c := range cards {
		out.PaymentMethods = append(out.PaymentMethods, contract.ManagedPaymentMethod{Type: "card", ID: c.ID, DisplayName: c.DisplayName(),
			DisplayLast4: c.Last4, DisplayBrand: c.Brand})
		lines = append(lines, c.ID+": "+c.DisplayName())
	}
	return out, strings.Join(lines, "\n"), nil
}
