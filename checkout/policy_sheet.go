package checkout

import (
	"fmt"
	"slices"
)

// PaymentSheet is the host's payment sheet (ChatGPT's requestCheckout),
// which needs the host's approval of the merchant: off by default, so that
// the checkout widget's Pay opens the shop's payment page
// (create_payment_link). On, the widget takes the sheet where the host
// offers one and the payment page when the sheet fails.
type PaymentSheet struct {
	// Enabled turns the payment sheet on.
	Enabled bool `yaml:"enabled"`
	// TestMerchantID and LiveMerchantID are the merchant ids the sheet pays
	// in each payment mode (the host may give test mode another); each
	// defaults to the policy's merchant_id.
	TestMerchantID string `yaml:"test_merchant_id"`
	LiveMerchantID string `yaml:"live_merchant_id"`
	// Wallets are the wallets the sheet offers beside cards: apple_pay,
	// google_pay.
	Wallets []string `yaml:"wallets"`
}

// Wallets the payment sheet may offer.
var knownWallets = []string{"apple_pay", "google_pay"}

// SheetEnabled reports whether buyers may pay on the host's payment sheet;
// false (the default, or external_checkout: true) leaves the payment page.
func (p *Policy) SheetEnabled() bool {
	return p.PaymentSheet.Enabled && !p.ExternalCheckout
}

// sheetMerchantID is the merchant id sessions name in the policy's mode.
func (p *Policy) sheetMerchantID() string {
	id := p.PaymentSheet.TestMerchantID
	if p.PaymentMode == PaymentLive {
		id = p.PaymentSheet.LiveMerchantID
	}
	if id == "" {
		return p.MerchantID
	}
	return id
}

// paymentSheet checks the payment_sheet block.
func (v *validator) paymentSheet(s PaymentSheet) {
	for _, f := range []struct{ at, id string }{{"payment_sheet.test_merchant_id", s.TestMerchantID}, {"payment_sheet.live_merchant_id", s.LiveMerchantID}} {
		if len(f.id) > 200 {
			v.add(f.at, "must be at most 200 characters (got %d)", len(f.id))
		}
	}
	for i, w := range s.Wallets {
		at := fmt.Sprintf("payment_sheet.wallets[%d]", i)
		switch {
		case !slices.Contains(knownWallets, w):
			v.add(at, "must be apple_pay or google_pay (got %q)", w)
		case slices.Index(s.Wallets, w) < i:
			v.add(at, "%s is listed twice", w)
		}
	}
}

// SheetEnabled reports whether the checkout widget may pay on the host's
// payment sheet (the policy's payment_sheet.enabled).
func (c *Checkout) SheetEnabled() bool { return c.policy.SheetEnabled() }
