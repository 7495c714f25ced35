package main

import (
	"testing"
)

// testSavedCards: a guest's checkout widget offers no saved cards (a
// linked buyer's session lists them in payment_provider.managed_payment_methods,
// shown to that buyer only; see checkout's TestSavedCardRoad), and Pay
// keeps the guest's road.
func testSavedCards(t *testing.T, p *page) {
	s := p.readySession()
	p.loadCheckout(s.ID, loadOptions{})
	var has bool
	p.eval(`!!document.querySelector("#saved-cards")`, &has)
	if has {
		t.Fatal("a guest's widget offers saved cards")
	}
	if got := p.text("#pay-hint"); got == "" {
		t.Error("no payment hint under Pay")
	}
}
