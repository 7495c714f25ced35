package checkout_test

import (
	"context"
	"testing"
	"time"

	"shop/checkout"
	"shop/database"
	"shop/database/dbtest"
	"shop/orders"
)

// TestReturnPageLink: a policy whose links name no return page lists the
// page the shop makes from its returns: (orders.ReturnPagePath).
func TestReturnPageLink(t *testing.T) {
	db := dbtest.Open(t, database.SQLite)
	co := newCheckoutWith(t, db, &clock{now: time.Now()}, &checkout.Options{}, func(p *checkout.Policy) { p.Links.ReturnPolicy = "" })
	s, err := co.Create(context.Background(), checkout.Request{Items: items("enamel-camp-mug-forest-green", 1)})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range s.Links {
		if l.Type == "return_policy" {
			if l.URL != "http://127.0.0.1:8000"+orders.ReturnPagePath {
				t.Errorf("return_policy link %q, want the shop's page %s", l.URL, orders.ReturnPagePath)
			}
			return
		}
	}
	t.Errorf("no return_policy link in %+v", s.Links)
}
