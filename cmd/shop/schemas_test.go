package main

import (
	"context"
	"encoding/json"
	"testing"

	"shop/database"
	"shop/database/dbtest"
)

// TestAdminToolsList keeps the admin endpoint's tools/list in a golden file.
func TestAdminToolsList(t *testing.T) {
	shop := startShop(t, dbtest.DSN(t, database.SQLite), map[string]string{"SHOP_ADMIN_TOKENS": "owner:" + ownerToken})
	s := connectAdmin(t, shop.url, ownerToken)
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(res.Tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "admin-tools.json", append(got, '\n'))
}
