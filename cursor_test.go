package shop_test

import (
	"testing"

	"shop"
)

// TestCursor: a cursor decodes to the position it was made from; what is
// not one (not base64url, not JSON) is refused.
func TestCursor(t *testing.T) {
	type position struct {
		V  int    `json:"v"`
		ID string `json:"i"`
	}
	in := position{V: 1, ID: "ord_x"}
	var out position
	if s := shop.EncodeCursor(in); !shop.DecodeCursor(s, &out) || out != in {
		t.Errorf("DecodeCursor(EncodeCursor(%+v)) = %+v", in, out)
	}
	for _, bad := range []string{"not a cursor!", "bm90IGpzb24", ""} {
		if shop.DecodeCursor(bad, &out) {
			t.Errorf("DecodeCursor(%q) accepted", bad)
		}
	}
}
