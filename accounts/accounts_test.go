package accounts_test

import (
	"context"
	"errors"
	"testing"

	"gorm.io/gorm"

	"shop/accounts"
	"shop/database/dbtest"
)

func TestEnsureOneAccountPerEmail(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		a, err := accounts.Ensure(ctx, db, " Ada@Example.com ")
		if err != nil {
			t.Fatal(err)
		}
		b, err := accounts.Ensure(ctx, db, "ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if a.ID != b.ID || a.Email != "ada@example.com" {
			t.Fatalf("Ensure gave %+v then %+v, want one account for ada@example.com", a, b)
		}
		got, err := accounts.Get(ctx, db, a.ID)
		if err != nil || got.ID != a.ID {
			t.Fatalf("Get(%s) = %+v, %v", a.ID, got, err)
		}
		if _, err := accounts.Get(ctx, db, "acct_missing"); !errors.Is(err, accounts.ErrNotFound) {
			t.Fatalf("Get(missing) error = %v, want ErrNotFound", err)
		}
	})
}
