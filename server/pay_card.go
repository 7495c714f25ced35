package server

// The card the sandbox payment page pays with: a test card, or one of the
// linked buyer's saved cards, saved there when they tick the box.

import (
	"context"
	"errors"
	"net/http"

	"shop"
	"shop/i18n"
)

// chosenCard is the card the sandbox page's form chose: a test card, or one
// of the buyer's saved cards (saved now when they ticked "Save this card").
// When the form chose none it answers the page again, and false.
func (p *payPages) chosenCard(w http.ResponseWriter, r *http.Request, id, token, email string) (string, bool) {
	card := r.PostForm.Get("card")
	known := false
	for _, c := range testCards {
		known = known || c.Value == card
	}
	saved := false
	if !known {
		s, err := p.c.Get(r.Context(), id)
		if err != nil {
			p.failed(w, r, err)
			return "", false
		}
		for _, m := range s.PaymentProvider.ManagedPaymentMethods {
			saved = saved || m.ID == card
		}
		if !saved {
			p.show(w, r, s, token, i18n.FromRequest(r).T("pay_choose_card"), email)
			return "", false
		}
	}
	if known && r.PostForm.Get("save_card") == "1" && p.canSave(r.Context(), id) {
		// The buyer ticked "Save this card for next time": the card is
		// saved with the provider for their account, and pays as saved.
		savedID, err := p.c.SaveCard(r.Context(), id, card)
		if err != nil {
			var e *shop.Error
			if !errors.As(err, &e) {
				p.failed(w, r, err)
				return "", false
			}
			s, err := p.c.Get(r.Context(), id)
			if err != nil {
				p.failed(w, r, err)
				return "", false
			}
			p.show(w, r, s, token, e.Message, email)
			return "", false
		}
		card = savedID
	}
	return card, true
}

// canSave reports whether the page offers to save the card: the session is
// a linked account's and the shop keeps saved cards.
func (p *payPages) canSave(ctx context.Context, sessionID string) bool {
	if !p.c.SavesCards() {
		return false
	}
	account, err := p.c.AccountOf(ctx, sessionID)
	return err == nil && account != ""
}
