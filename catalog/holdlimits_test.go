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

// TestCheckLimits: the limits on one buyer count the peers of the same key
// (Counts), ignore the others, and when the lines fit only with peers gone,
// the fewest that may give way do, least recently changed first.
func TestCheckLimits(t *testing.T) {
	l := catalog.HoldLimits{UnitsPerVariant: 10, UnitsPerBuyer: 20, OpenSessions: 3}
	peer := func(id string, counts, yields, paying bool, holds ...any) catalog.HoldPeer {
		p := catalog.HoldPeer{Holder: id, Holds: map[string]int64{}, Counts: counts, Yields: yields, Paying: paying}
		for i := 0; i < len(holds); i += 2 {
			p.Holds[holds[i].(string)] = int64(holds[i+1].(int))
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		limits  catalog.HoldLimits
		lines   []catalog.HoldLine
		peers   []catalog.HoldPeer
		over    catalog.OverLimits
		release []string
	}{
		{"OK_Alone", l, lines("a", 10), nil, catalog.OverLimits{}, nil},
		{"ErrVariant", l, lines("a", 11), nil, catalog.OverLimits{Lines: map[int]int64{0: 0}, Paying: true}, nil},
		{"ErrVariantWithPaying", l, lines("a", 6), []catalog.HoldPeer{peer("p", true, false, true, "a", 5)},
			catalog.OverLimits{Lines: map[int]int64{0: 5}, Paying: true}, nil},
		{"ErrUnitsWithOthers", l, lines("a", 8, "b", 8), []catalog.HoldPeer{peer("p", true, false, false, "c", 5)},
			catalog.OverLimits{Lines: map[int]int64{}, Units: 16, OtherUnits: 5}, nil},
		{"ErrSessions", l, lines("a", 1), []catalog.HoldPeer{peer("p", true, false, false, "c", 1), peer("q", true, false, false, "c", 1), peer("r", true, false, false, "c", 1)},
			catalog.OverLimits{Lines: map[int]int64{}, Sessions: 3}, nil},
		{"OK_NoSessionBound", catalog.HoldLimits{UnitsPerVariant: 10, UnitsPerBuyer: 20}, lines("a", 1),
			[]catalog.HoldPeer{peer("p", true, false, false, "c", 1), peer("q", true, false, false, "c", 1), peer("r", true, false, false, "c", 1)}, catalog.OverLimits{}, nil},
		{"OK_StrangersDoNotCount", l, lines("a", 10), []catalog.HoldPeer{peer("e", false, true, false, "a", 10)}, catalog.OverLimits{}, nil},
		{"OK_OldestYielderGoes", l, lines("a", 5), []catalog.HoldPeer{peer("old", true, true, false, "a", 5), peer("new", true, true, false, "a", 5)},
			catalog.OverLimits{}, []string{"old"}},
		{"OK_OnlyYieldersThatEase", l, lines("a", 6), []catalog.HoldPeer{peer("old", true, true, false, "b", 5), peer("new", true, true, false, "a", 5)},
			catalog.OverLimits{}, []string{"new"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			over, release := catalog.CheckLimits(tc.limits, tc.lines, tc.peers)
			if over.None() {
				over = catalog.OverLimits{}
			}
			if diff := cmp.Diff(tc.over, over); diff != "" {
				t.Errorf("over (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.release, release); diff != "" {
				t.Errorf("release (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHoldsRecordTheirBuyer: what ItemsToHold reads of the limits comes
// from the holds' own columns: the buyer's other holders by key and by
// email, what an address and a /48 hold, what untrusted buyers hold of a
// variant, and the holder's own holds; Unreserved measures the bounds on
// untrusted buyers with it.
func TestHoldsRecordTheirBuyer(t *testing.T) {
	ctx := context.Background()
	const (
		pan = "cast-iron-skillet-12-in" // 7 on hand
		mug = "enamel-camp-mug-cream"
	)
	guest := catalog.HoldBuyer{Key: "addr:192.0.2.1", Email: "ada@example.com", Address: "2001:db8:1:2::/64", Network: "2001:db8:1::/48"}
	account := catalog.HoldBuyer{Key: "account:1", Email: "ada@example.com", Address: "2001:db8:1:2::/64", Network: "2001:db8:1::/48", Trusted: true}
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		c := demo(t, db)
		hold := func(holder string, b catalog.HoldBuyer, l []catalog.HoldLine) {
			t.Helper()
			transact(t, db, func(tx *gorm.DB) error {
				res, err := c.Hold(ctx, tx, catalog.HoldRequest{Holder: holder, Buyer: b, Lines: l, Until: time.Now().Add(time.Hour)})
				if err == nil && len(res.Short) > 0 {
					t.Fatalf("%s short: %+v", holder, res.Short)
				}
				return err
			})
		}
		hold("cs_1", guest, lines(pan, 2))
		hold("cs_2", account, lines(pan, 1, mug, 3))
		hold("cs_3", catalog.HoldBuyer{Key: "addr:198.51.100.7", Address: "198.51.100.7"}, lines(pan, 1))
		seen, err := c.ItemsToHold(ctx, nil, []string{"cs_new"}, guest, []string{pan, mug})
		if err != nil {
			t.Fatal(err)
		}
		got := struct {
			Others, Unverified                               map[string]int64
			KeyHolds, EmailHolds, AddressUnits, NetworkUnits int64
			MineRows                                         int64
		}{seen.Others, seen.Unverified, seen.KeyHolds, seen.EmailHolds, seen.AddressUnits, seen.NetworkUnits, seen.MineRows}
		want := got
		want.Others, want.Unverified = map[string]int64{pan: 4, mug: 3}, map[string]int64{pan: 3}
		want.KeyHolds, want.EmailHolds, want.AddressUnits, want.NetworkUnits, want.MineRows = 1, 3, 2, 2, 0
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ItemsToHold for a new holder (-want +got):\n%s", diff)
		}
		if mine, err := c.ItemsToHold(ctx, nil, []string{"cs_2"}, account, []string{pan, mug}); err != nil || mine.MineRows != 2 || mine.Mine[mug] != 3 {
			t.Errorf("ItemsToHold for cs_2: %+v %v, want its 2 rows, 3 of %s", mine, err, mug)
		}
		// ItemsToPrice reads the same but the bounds' sums, and says so.
		priced, err := c.ItemsToPrice(ctx, nil, []string{"cs_new"}, guest, []string{pan, mug})
		if err != nil {
			t.Fatal(err)
		}
		gotPriced := struct {
			Others                         map[string]int64
			KeyHolds, EmailHolds, MineRows int64
			Bounded                        bool
		}{priced.Others, priced.KeyHolds, priced.EmailHolds, priced.MineRows, priced.Bounded}
		wantPriced := gotPriced
		wantPriced.Others, wantPriced.KeyHolds, wantPriced.EmailHolds, wantPriced.MineRows, wantPriced.Bounded = want.Others, 1, 3, 0, false
		if diff := cmp.Diff(wantPriced, gotPriced); diff != "" || !seen.Bounded || priced.AddressUnits != 0 || len(priced.Unverified) != 0 {
			t.Errorf("ItemsToPrice for a new holder (-want +got):\n%s (bounds %d %v; ItemsToHold's bounded: %v)", diff, priced.AddressUnits, priced.Unverified, seen.Bounded)
		}
		for _, tc := range []struct {
			name   string
			limits catalog.HoldLimits
			buyer  catalog.HoldBuyer
			lines  []catalog.HoldLine
			want   *catalog.Unreserved
		}{
			{"OK_WithinBounds", catalog.HoldLimits{AddressUnits: 4, NetworkUnits: 4, UnverifiedShare: 100}, guest, lines(mug, 2), nil},
			{"ErrAddress", catalog.HoldLimits{AddressUnits: 3, UnverifiedShare: 100}, guest, lines(mug, 2), &catalog.Unreserved{Bound: "address", Limit: 3, Held: 2}},
			{"ErrNetwork", catalog.HoldLimits{NetworkUnits: 3, UnverifiedShare: 100}, guest, lines(mug, 2), &catalog.Unreserved{Bound: "network", Limit: 3, Held: 2}},
			// Half of the 7 pans is 3, and untrusted buyers hold 3.
			{"ErrShare", catalog.HoldLimits{UnverifiedShare: 50}, guest, lines(pan, 1), &catalog.Unreserved{Bound: "share", Limit: 3, Held: 3, VariantID: pan}},
			{"OK_Trusted", catalog.HoldLimits{AddressUnits: 1, UnverifiedShare: 1}, account, lines(pan, 1), nil},
		} {
			if got := seen.Unreserved(tc.limits, tc.buyer, tc.lines); !cmp.Equal(tc.want, got) {
				t.Errorf("%s: Unreserved = %+v, want %+v", tc.name, got, tc.want)
			}
		}
	})
}
