package bench

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"shop/checkout"
)

// TestSentShapes: what the bench sends decodes, field for field, into the
// shop's own types (only this test imports them). The bench's types are its
// own, as an independent client's would be; a field the shop does not know
// would be refused.
func TestSentShapes(t *testing.T) {
	for _, c := range []struct {
		mine, shop any
	}{
		{benchAddress, &checkout.Address{}},
		{benchBuyer, &checkout.Buyer{}},
		{item{ID: "v", Quantity: 1}, &checkout.Item{}},
	} {
		b, err := json.Marshal(c.mine)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(c.shop); err != nil {
			t.Errorf("%s: %v", b, err)
		}
		back, _ := json.Marshal(c.shop)
		if !bytes.Equal(b, back) {
			t.Errorf("sent %s, the shop reads %s", b, back)
		}
	}
}

// TestWords: a title's words of three letters or more, lower-cased.
func TestWords(t *testing.T) {
	got := words("Classic Oak-wood MUG, 16 oz")
	if want := []string{"classic", "oak", "wood", "mug"}; !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}
