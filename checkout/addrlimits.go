package checkout

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/database"
)

// Limits that hold whatever buyer ids a client invents. A buyer key is what
// the caller says (a host's user id, an ACP buyer email), so the limits of
// holdlimits.go alone let one client hold everything by rotating it. Two
// more bound holds, checked in the transaction that takes them:
//
//   - an aggregate per client address (sessionRow.BuyerAddress): what all
//     the untrusted buyers hold from one address, at most
//     Limits.UnitsPerAddress, or a host range's Units (Limits.HostAddresses);
//   - a share per variant: what all the untrusted buyers hold of a variant,
//     at most Limits.UnverifiedShare percent of its stock on hand (at least
//     one unit), so a hoarder with many addresses never takes the last
//     units from everyone.
//
// A linked account earns trust by paying: one that had a paid order when
// the session was created (sessionRow.Trusted) is counted by account alone
// (with Limits.UnitsPerAccount). A fresh account costs only an email the
// caller can read, so it is untrusted, as a guest is. A session over either bound is not a dead
// end: it holds nothing, and is ready for payment with an info message
// saying its items are not reserved; paying it takes the stock if it is
// still there (the claim's holds skip these two bounds: a payment is short
// and leads to a sale).
//
// Under concurrency the bounds hold in the database: on PostgreSQL the
// transaction takes advisory locks on the address, then on each variant in
// id order (after the buyer's, before the catalog's row locks: always in
// that order, so never in a cycle); SQLite runs write transactions one at a
// time.
//
// The same addresses and buyers are capped in what they create per hour:
// checkout sessions and carts (Limits.SessionsPerHour and
// SessionsPerAddressHour) and payment attempts (Limits.PaymentsPerHour and
// PaymentsPerAddressHour); a host range raises the per-address caps in
// proportion to its Units.
//
// An IPv6 client is its /64 (shop.Buyer.Address), and every bound per
// address holds a second time over its /48 (sessionRow.BuyerNetwork), at
// Limits.NetworkMultiple times the address's: one customer of a hosting
// provider may hold a whole /48. The lock of an IPv6 address is its /48's
// (catalog.AddressLock), so the counts of both tiers are taken one at a time.

// addressLimits are the bounds that apply to one client address.
type addressLimits struct {
	units int64 // what its unverified buyers may hold at once
	scale int64 // the multiple of the per-address hourly caps (1, or a host range's)
}

// forNetwork is the bounds of the IPv6 /48 network (shop.NetworkOf): its
// addresses' bounds (a host range's when one covers it), NetworkMultiple
// times larger.
func (l Limits) forNetwork(network string) addressLimits {
	a := l.forAddress(network)
	return addressLimits{units: a.units * l.NetworkMultiple, scale: a.scale * l.NetworkMultiple}
}

// byNetwork is the condition on a row's buyer_network, with the literal
// that lets the partial indexes of migration 00111 serve it.
const byNetwork = "buyer_network = ? AND buyer_network <> ''"

// forAddress is the bounds of the client address addr (shop.Buyer.Address:
// an IPv4 address, or an IPv6 /64 prefix).
func (l Limits) forAddress(addr string) addressLimits {
	out := addressLimits{units: l.UnitsPerAddress, scale: 1}
	if len(l.HostAddresses) == 0 || addr == "" {
		return out
	}
	p, err := netip.ParsePrefix(addr)
	if err != nil {
		a, err := netip.ParseAddr(addr)
		if err != nil {
			return out
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	for _, h := range l.HostAddresses {
		r, err := netip.ParsePrefix(h.CIDR)
		if err != nil || !r.Overlaps(p) || h.Units <= out.units {
			continue
		}
		out.units = h.Units
		out.scale = max(1, h.Units/l.UnitsPerAddress)
	}
	return out
}

// holdRoom reports, in the transaction about to take row's holds of lines,
// why the address aggregate or the unverified share would not let them be
// held, as the unreserved message (the zero Message when they may be).
// seen is what the catalog read with the items (its sums leave out row's
// holds), read again with the bounds' sums when it has none; release are
// the sessions giving way for the limits, whose holds go with this
// transaction too.
func (c *Checkout) holdRoom(ctx context.Context, tx *gorm.DB, row *sessionRow, email string, release []string, lines []cartLine, seen *catalog.HoldView) (Message, error) {
	if row.Trusted {
		return Message{}, nil // counted by account alone
	}
	if len(release) > 0 || !seen.Bounded {
		var err error
		if seen, err = c.catalog.ItemsToHold(ctx, tx, append([]string{row.ID}, release...), holdBuyer(row, email), lineIDs(lines)); err != nil {
			return Message{}, err
		}
	}
	l := c.policy.BuyerLimits()
	bounds := catalog.HoldLimits{AddressUnits: l.forAddress(row.BuyerAddress).units, UnverifiedShare: l.UnverifiedShare}
	if row.BuyerNetwork != "" {
		bounds.NetworkUnits = l.forNetwork(row.BuyerNetwork).units
	}
	u := seen.Unreserved(bounds, holdBuyer(row, email), holdLines(lines))
	switch {
	case u == nil:
		return Message{}, nil
	case u.Bound == "address":
		return keyed(unreserved(fmt.Sprintf("this shop reserves at most %d units at once for the buyers at one network address, and %d are reserved there already", u.Limit, u.Held)),
			KeyUnreservedAddress, "limit", itoa(u.Limit), "held", itoa(u.Held)), nil
	case u.Bound == "network":
		return keyed(unreserved(fmt.Sprintf("this shop reserves at most %d units at once for the buyers of one network (an IPv6 /48), and %d are reserved there already", u.Limit, u.Held)),
			KeyUnreservedAddress, "limit", itoa(u.Limit), "held", itoa(u.Held)), nil
	}
	name := u.VariantID
	if i := slices.IndexFunc(lines, func(l cartLine) bool { return l.VariantID == u.VariantID }); i >= 0 {
		name = lines[i].Name
	}
	return keyed(unreserved(fmt.Sprintf("at most %d units of %s may be reserved at once for buyers the shop cannot vouch for (a linked account that has paid for an order may reserve more)", u.Limit, name)),
		KeyUnreservedUnverified, "limit", itoa(u.Limit), "name", name), nil
}

// lineIDs are the variant ids of lines.
func lineIDs(lines []cartLine) []string {
	ids := make([]string, len(lines))
	for i, l := range lines {
		ids[i] = l.VariantID
	}
	return ids
}

// unreserved is the info message of a session ready for payment whose
// items are not held, saying why and that it can still be paid.
func unreserved(why string) Message {
	return infoMessage("", "$.line_items", "Your items are not reserved: "+why+
		". You can still pay for them; they are yours if they are still in stock when you pay.")
}

// createdSince counts the rows of table (checkout_sessions or carts)
// created since from the buyer key, the client address or its /48 (where,
// the condition that names it).
func createdSince(tx *gorm.DB, table, where, value string, since time.Time, limit int64) (int64, error) {
	var n int64
	// Counting stops at limit: past it the answer is the same, and an address
	// many people share may have started far more rows than any cap.
	err := database.QueryRow(tx, "SELECT COUNT(*) FROM (SELECT 1 FROM "+table+" WHERE "+where+" AND created_at > ? LIMIT ?) capped",
		value, since.UTC(), limit).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count %s created: %w", table, err)
	}
	return n, nil
}

// capTier is one of the hourly caps on what is created: rows of a table
// whose column where names (with value) created in the last hour, at
// most cap; who names it for the buyer, and buyer says it is the buyer's
// own cap rather than an address's.
type capTier struct {
	where, value, who string
	cap               int64
	buyer             bool
}

// capTiers are the hourly caps a new row of a buyer b falls under: the
// buyer's own when they are a host's user (a key of the address alone is
// the address's: its cap is theirs), the address's and its /48's.
func (c *Checkout) capTiers(b shop.Buyer) []capTier {
	l := c.policy.BuyerLimits()
	var tiers []capTier
	if key := b.Key(); shop.IsHostUser(key) && l.SessionsPerHour < maxPerHour {
		tiers = append(tiers, capTier{"buyer_key = ?", key, "one buyer", l.SessionsPerHour, true})
	}
	if b.Address == "" || l.SessionsPerAddressHour >= maxPerHour {
		return tiers
	}
	tiers = append(tiers, capTier{"buyer_address = ?", b.Address, "one network address", l.SessionsPerAddressHour * l.forAddress(b.Address).scale, false})
	if network := b.Network(); network != "" {
		tiers = append(tiers, capTier{byNetwork, network, "one network (an IPv6 /48)", l.SessionsPerAddressHour * l.forNetwork(network).scale, false})
	}
	return tiers
}

// lockCreator takes, first in a transaction that creates a row under the
// hourly caps, the buyer's lock and then the address's (the order of
// holdlimits.go and holdRoom, which take them again).
func lockCreator(tx *gorm.DB, b shop.Buyer) error {
	if key := b.Key(); key != "" {
		if err := database.LockKey(tx, catalog.BuyerLock(key)); err != nil {
			return fmt.Errorf("lock buyer: %w", err)
		}
	}
	if b.Address != "" {
		if err := database.LockKey(tx, catalog.AddressLock(b.Address)); err != nil {
			return fmt.Errorf("lock address: %w", err)
		}
	}
	return nil
}

// underCaps is the condition that table's rows created since by the
// tiers' buyer and addresses are below their caps, with its arguments
// ("" when there is no tier). Counting stops at the cap: past it the
// answer is the same, and an address many people share may have started
// far more rows than any cap.
func underCaps(table string, tiers []capTier, since time.Time) (string, []any) {
	var conds []string
	var args []any
	for _, t := range tiers {
		conds = append(conds, "(SELECT COUNT(*) FROM (SELECT 1 FROM "+table+" WHERE "+t.where+" AND created_at > ? LIMIT ?) capped) < ?")
		args = append(args, t.value, since.UTC(), t.cap, t.cap)
	}
	return strings.Join(conds, " AND "), args
}

// overCap is the unavailable error of the first tier whose cap the rows
// of table created since reach, nil when none does; what names the rows
// for the buyer.
func overCap(tx *gorm.DB, table, what string, tiers []capTier, since time.Time) error {
	for _, t := range tiers {
		n, err := createdSince(tx, table, t.where, t.value, since, t.cap)
		if err != nil {
			return err
		}
		if n < t.cap {
			continue
		}
		if t.buyer {
			return shop.Errorf(shop.Unavailable, "", "one buyer may start at most %d %s an hour; use one of the ones already started (update it), or try again later", t.cap, what)
		}
		return shop.Errorf(shop.Unavailable, "", "at most %d %s may be started an hour from %s; use one of the ones already started (update it), or try again later", t.cap, what, t.who)
	}
	return nil
}

// insertCapped inserts a new session's row in tx under the hourly caps of
// its buyer and address (addrlimits.go), in one statement; over a cap, it
// answers why.
func (c *Checkout) insertCapped(tx *gorm.DB, row *sessionRow, buyer shop.Buyer, now time.Time) error {
	tiers, since := c.capTiers(buyer), now.Add(-time.Hour)
	cond, args := underCaps("checkout_sessions", tiers, since)
	ok, err := insertRowUnder(tx, row, cond, args)
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	if ok {
		return nil
	}
	if err := overCap(tx, "checkout_sessions", "checkout sessions", tiers, since); err != nil {
		return err
	}
	return fmt.Errorf("create session: no row written, and no hourly cap reached")
}

// creationCap refuses, with an unavailable error, a new row of table (what
// names it for the buyer) when its buyer or their client address created
// as many as the policy allows in the last hour (capTiers). It runs first
// in the transaction that inserts the row. A session is inserted under the
// caps instead (insertRowUnder), in one statement.
func (c *Checkout) creationCap(ctx context.Context, tx *gorm.DB, table, what string, b shop.Buyer, now time.Time) error {
	tx = tx.WithContext(ctx)
	if err := lockCreator(tx, b); err != nil {
		return err
	}
	return overCap(tx, table, what, c.capTiers(b), now.Add(-time.Hour))
}
