package checkout

// A session's lines as the catalog has them now, the option the pricing
// keeps, and the buyer's language noted on the row.

import (
	"context"
	"fmt"

	"shop"
	"shop/catalog"
)

// cartLines are st's items as the catalog has them now (seen, read with
// their holds), with an out_of_stock problem per line the stock available
// to the buyer of row does not cover: its own holds and those of the
// buyer's sessions that give way count (holdlimits.go).
func cartLines(st state, buyer *buyerSessions, seen *catalog.HoldView) ([]cartLine, []Message, error) {
	var problems []Message
	lines := make([]cartLine, len(st.Items))
	for i, it := range st.Items {
		v, ok := seen.Items[it.ID]
		if !ok {
			return nil, nil, shop.Errorf(shop.Invalid, fmt.Sprintf("$.items[%d].id", i), "no variant has id %q; get variant ids from get_product", it.ID)
		}
		for _, o := range buyer.others {
			if o.yields {
				v.Available = min(v.OnHand, v.Available+o.holds[it.ID])
			}
		}
		lines[i] = cartLine{VariantID: it.ID, Quantity: it.Quantity, Name: v.Name, Description: v.Description, Images: v.Images, UnitAmount: v.Price, OnHand: v.OnHand}
		if it.Quantity > v.Available && !buyer.overLine(it.Quantity, v.Available) {
			problems = append(problems, outOfStock(i, v.Name, v.Available))
		}
	}
	return lines, problems, nil
}

// itemIDs are the variant ids of st's items.
func (st state) itemIDs() []string {
	ids := make([]string, len(st.Items))
	for i, it := range st.Items {
		ids[i] = it.ID
	}
	return ids
}

// keptOption is the option of st the pricing keeps as the buyer's choice
// (the snapshot's KeptOption), given the option it chose (chosen), whether
// it offered any (offered) and whether st's option was kept from before
// (wasKept). A choice that vanished with the zone, replaced by the
// cheapest, is dropped from st: from then on the session has no choice of
// its own.
func keptOption(st *state, chosen string, offered, wasKept bool) string {
	switch {
	case st.OptionID == "":
	case chosen == st.OptionID:
		return st.OptionID
	case !offered && wasKept:
		return st.OptionID // no address to judge it by: still the buyer's choice
	case chosen != "":
		st.OptionID = ""
	}
	return ""
}

// noteLocale records on row the buyer's language ctx carries, if any.
func noteLocale(ctx context.Context, row *sessionRow) {
	if l := shop.LocaleFrom(ctx); l != "" {
		row.Locale = l
	}
}
