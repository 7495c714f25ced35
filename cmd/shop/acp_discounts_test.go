package main

import (
	"encoding/json"
	"testing"

	"shop/database/dbtest"
)

// TestACPDiscounts: ACP's discounts.codes reach the same core as UCP's:
// several codes, matched case-insensitively, one of each kind applied, each
// other one in discounts.rejected with ACP's reason, [] clearing them; every
// answer follows ACP's schema.
func TestACPDiscounts(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			s := startACPShop(t, d)
			create := shippable("enamel-camp-mug-cream", 3)
			create["discounts"] = map[string]any{"codes": []string{"welcome10", "FREESHIP", "NOPE", "Welcome10"}}
			ans := s.agent.call(t, "create_checkout_session", acpArgs(newKey(t, "create"), "", create))
			created := ans.session(t)
			var got struct {
				Discounts struct {
					Codes   []string `json:"codes"`
					Applied []struct {
						Code   string `json:"code"`
						Coupon struct{ Name string }
						Amount int64 `json:"amount"`
					} `json:"applied"`
					Rejected []struct{ Code, Reason string } `json:"rejected"`
				} `json:"discounts"`
			}
			if err := json.Unmarshal(ans.Result.StructuredContent, &got); err != nil {
				t.Fatal(err)
			}
			dsc := got.Discounts
			if len(dsc.Codes) != 4 || len(dsc.Applied) != 2 || dsc.Applied[0].Code != "WELCOME10" || dsc.Applied[1].Code != "FREESHIP" ||
				dsc.Applied[0].Coupon.Name == "" || dsc.Applied[0].Amount <= 0 {
				t.Errorf("discounts %+v", dsc)
			}
			if len(dsc.Rejected) != 2 || dsc.Rejected[0].Reason != "discount_code_invalid" || dsc.Rejected[1].Reason != "discount_code_already_applied" {
				t.Errorf("rejected %+v", dsc.Rejected)
			}
			cleared := s.agent.call(t, "update_checkout_session", acpArgs(newKey(t, "update"), created.ID, map[string]any{"discounts": map[string]any{"codes": []string{}}}))
			_ = cleared.session(t)
			var after struct {
				Discounts *json.RawMessage `json:"discounts"`
			}
			if err := json.Unmarshal(cleared.Result.StructuredContent, &after); err != nil || after.Discounts != nil {
				t.Errorf("codes: [] left discounts: %s (%v)", cleared.Result.StructuredContent, err)
			}
		})
	}
}
