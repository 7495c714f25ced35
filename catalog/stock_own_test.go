package catalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop/catalog"
	"shop/database/dbtest"
)

// TestHoldGivingWay: the units of the holders named in Yield and Release
// count as available to the one asking; those of Yield give them up in
// order, only as far as the lines need them, those of Release always, and
// nobody gives anything up when the lines fall short anyway. Everyone
// else's holds stay.
func TestHoldGivingWay(t *testing.T) {
	ctx := context.Background()
	const (
		pan = "cast-iron-skillet-12-in" // 7 on hand
		mug = "enamel-camp-mug-cream"
	)
	type held map[string]map[string]int64
	for _, tc := range []struct {
		name string
		// before are the holds taken first, holder by holder in order.
		before   []catalog.HoldRequest
		req      catalog.HoldRequest
		short    []catalog.Shortfall
		released []string
		after    held
	}{{
		name:   "OK_YielderGivesUpWhatIsNeeded",
		before: []catalog.HoldRequest{{Holder: "own", Lines: lines(pan, 4)}, {Holder: "stranger", Lines: lines(pan, 2)}},
		req:    catalog.HoldRequest{Holder: "new", Lines: lines(pan, 5), Yield: []string{"own"}},
		// All of the yielder's holds go, not only the units taken.
		released: []string{"own"},
		after:    held{"stranger": {pan: 2}, "new": {pan: 5}},
	}, {
		name:     "OK_YielderKeepsWhatIsNotNeeded",
		before:   []catalog.HoldRequest{{Holder: "own", Lines: lines(pan, 4)}},
		req:      catalog.HoldRequest{Holder: "new", Lines: lines(pan, 3), Yield: []string{"own"}},
		released: nil,
		after:    held{"own": {pan: 4}, "new": {pan: 3}},
	}, {
		name:   "ErrShortEvenWithYielders",
		before: []catalog.HoldRequest{{Holder: "own", Lines: lines(pan, 4)}, {Holder: "stranger", Lines: lines(pan, 2)}},
		req:    catalog.HoldRequest{Holder: "new", Lines: lines(pan, 6), Yield: []string{"own"}, Release: []string{"limited"}},
		short:  []catalog.Shortfall{{VariantID: pan, Requested: 6, Available: 5}},
		after:  held{"own": {pan: 4}, "stranger": {pan: 2}},
	}, {
		name:   "ErrStrangerNeverGivesWay",
		before: []catalog.HoldRequest{{Holder: "stranger", Lines: lines(pan, 7)}},
		req:    catalog.HoldRequest{Holder: "new", Lines: lines(pan, 1), Yield: []string{"own"}},
		short:  []catalog.Shortfall{{VariantID: pan, Requested: 1, Available: 0}},
		after:  held{"stranger": {pan: 7}},
	}, {
		name: "OK_InOrderSkippingThoseWithoutTheVariant",
		before: []catalog.HoldRequest{
			{Holder: "mugs", Lines: lines(mug, 1)}, {Holder: "first", Lines: lines(pan, 3)}, {Holder: "second", Lines: lines(pan, 3)},
		},
		req:      catalog.HoldRequest{Holder: "new", Lines: lines(pan, 2), Yield: []string{"mugs", "first", "second"}},
		released: []string{"first"},
		after:    held{"mugs": {mug: 1}, "second": {pan: 3}, "new": {pan: 2}},
	}, {
		name:     "OK_ReleaseGoesEvenWhenNotNeeded",
		before:   []catalog.HoldRequest{{Holder: "limited", Lines: lines(mug, 2)}, {Holder: "own", Lines: lines(pan, 2)}},
		req:      catalog.HoldRequest{Holder: "new", Lines: lines(pan, 1), Yield: []string{"own"}, Release: []string{"limited"}},
		released: []string{"limited"},
		after:    held{"own": {pan: 2}, "new": {pan: 1}},
	}, {
		name:     "OK_OwnHoldsReplaced",
		before:   []catalog.HoldRequest{{Holder: "new", Lines: lines(pan, 7)}},
		req:      catalog.HoldRequest{Holder: "new", Lines: lines(mug, 1)},
		released: nil,
		after:    held{"new": {mug: 1}},
	}, {
		name:   "OK_HeldKept",
		before: []catalog.HoldRequest{{Holder: "new", Lines: lines(pan, 3, mug, 1)}},
		req:    catalog.HoldRequest{Holder: "new", Lines: lines(pan, 3, mug, 1)},
		after:  held{"new": {pan: 3, mug: 1}},
	}, {
		// Hold reads what is held: holds found otherwise than the lines are
		// taken anew.
		name:  "OK_HeldButGoneTakenAnew",
		req:   catalog.HoldRequest{Holder: "new", Lines: lines(pan, 3)},
		after: held{"new": {pan: 3}},
	}, {
		name:   "OK_HeldButOtherwiseTakenAnew",
		before: []catalog.HoldRequest{{Holder: "new", Lines: lines(pan, 2, mug, 1)}},
		req:    catalog.HoldRequest{Holder: "new", Lines: lines(pan, 2)},
		after:  held{"new": {pan: 2}},
	}, {
		name:   "ErrHeldButShort",
		before: []catalog.HoldRequest{{Holder: "new", Lines: lines(pan, 2)}, {Holder: "stranger", Lines: lines(pan, 5)}},
		req:    catalog.HoldRequest{Holder: "new", Lines: lines(pan, 3)},
		short:  []catalog.Shortfall{{VariantID: pan, Requested: 3, Available: 2}},
		after:  held{"stranger": {pan: 5}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
				c := demo(t, db)
				until := time.Now().Add(time.Hour)
				hold := func(req catalog.HoldRequest) *catalog.HoldResult {
					t.Helper()
					req.Until = until
					var res *catalog.HoldResult
					err := db.Transaction(func(tx *gorm.DB) error {
						var err error
						res, err = c.Hold(ctx, tx, req)
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
					return res
				}
				for _, b := range tc.before {
					if res := hold(b); len(res.Short) > 0 {
						t.Fatalf("holding %s first: short %+v", b.Holder, res.Short)
					}
				}
				// What get_product would show the holder, counting the
				// yielders' units as available.
				if len(tc.short) > 0 {
					seen, err := c.ItemsToHold(ctx, nil, append([]string{tc.req.Holder}, append(tc.req.Release, tc.req.Yield...)...), catalog.HoldBuyer{}, []string{pan})
					if err != nil {
						t.Fatal(err)
					}
					if got, want := seen.Items[pan].Available, tc.short[0].Available; got != want {
						t.Errorf("ItemsToHold: %d available, want %d as Hold says", got, want)
					}
				}
				res := hold(tc.req)
				if diff := cmp.Diff(tc.short, res.Short); diff != "" {
					t.Errorf("short (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.released, res.Released); diff != "" {
					t.Errorf("released (-want +got):\n%s", diff)
				}
				got, err := c.HoldsOf(ctx, nil, []string{"own", "stranger", "new", "mugs", "first", "second", "limited"})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(held(tc.after), held(got)); diff != "" {
					t.Errorf("holds after (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func lines(kv ...any) []catalog.HoldLine {
	var out []catalog.HoldLine
	for i := 0; i < len(kv); i += 2 {
		out = append(out, catalog.HoldLine{VariantID: kv[i].(string), Quantity: int64(kv[i+1].(int))})
	}
	return out
}
