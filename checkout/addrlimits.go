package checkout

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"gorm.io/gorm"

	"shop"
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
// (addressLock), so the counts of both tiers are taken one at a time.

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

// addressLock is the key of the lock that makes the counts of addr's
// bounds one at a time: its IPv6 /48's, which covers the /64 and every
// other /64 of the /48 (the second tier), or the IPv4 address's own.
func addressLock(addr string) string {
	if network := shop.NetworkOf(addr); network != "" {
		return "shop.network:" + network
	}
	return "shop.address:" + addr
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
// held, as the unreserved message (the zero Message when they may be). gone are the holders whose holds go with
// this transaction (row's, and the sessions giving way for the limits).
func (c *Checkout) holdRoom(ctx context.Context, tx *gorm.DB, row *sessionRow, gone []string, lines []cartLine, now time.Time) (Message, error) {
	if row.Trusted {
		return Message{}, nil // counted by account alone
	}
	tx = tx.WithContext(ctx)
	l := c.policy.BuyerLimits()
	var units int64
	for _, line := range lines {
		units += line.Quantity
	}
	if row.BuyerAddress != "" {
		if err := database.LockKey(tx, addressLock(row.BuyerAddress)); err != nil {
			return Message{}, fmt.Errorf("lock address: %w", err)
		}
		held, err := c.addressHeld(tx, "s.buyer_address = ?", row.BuyerAddress, gone, now)
		if err != nil {
			return Message{}, err
		}
		if cap := l.forAddress(row.BuyerAddress).units; held+units > cap {
			return keyed(unreserved(fmt.Sprintf("this shop reserves at most %d units at once for the buyers at one network address, and %d are reserved there already", cap, held)),
				KeyUnreservedAddress, "limit", itoa(cap), "held", itoa(held)), nil
		}
	}
	if row.BuyerNetwork != "" {
		held, err := c.addressHeld(tx, "s."+byNetwork, row.BuyerNetwork, gone, now)
		if err != nil {
			return Message{}, err
		}
		if cap := l.forNetwork(row.BuyerNetwork).units; held+units > cap {
			return keyed(unreserved(fmt.Sprintf("this shop reserves at most %d units at once for the buyers of one network (an IPv6 /48), and %d are reserved there already", cap, held)),
				KeyUnreservedAddress, "limit", itoa(cap), "held", itoa(held)), nil
		}
	}
	if l.UnverifiedShare >= 100 {
		return Message{}, nil
	}
	ids := make([]string, len(lines))
	for i, line := range lines {
		ids[i] = line.VariantID
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := database.LockKey(tx, "shop.share:"+id); err != nil {
			return Message{}, fmt.Errorf("lock variant share: %w", err)
		}
	}
	held, err := c.unverifiedHeld(tx, ids, gone, now)
	if err != nil {
		return Message{}, err
	}
	for _, line := range lines {
		if cap := max(1, line.OnHand*l.UnverifiedShare/100); held[line.VariantID]+line.Quantity > cap {
			return keyed(unreserved(fmt.Sprintf("at most %d units of %s may be reserved at once for buyers the shop cannot vouch for (a linked account that has paid for an order may reserve more)", cap, line.Name)),
				KeyUnreservedUnverified, "limit", itoa(cap), "name", line.Name), nil
		}
	}
	return Message{}, nil
}

// addressHeld sums the live holds of the sessions created from addr (where,
// the condition on the session s that names it: its address or its /48) by
// untrusted buyers, but those of gone. A session holds only within its
// lifetime, and a claim's holds a little past it: a day's margin bounds the
// sessions read.
func (c *Checkout) addressHeld(tx *gorm.DB, where, addr string, gone []string, now time.Time) (int64, error) {
	since := now.Add(-c.policy.SessionLifetime() - 24*time.Hour)
	args := []any{addr, since.UTC(), now.UTC()}
	// The live holds are read first (CROSS JOIN keeps SQLite's planner to
	// that order): they are few, while an address many people share may
	// have started thousands of sessions within a lifetime.
	q := "SELECT COALESCE(SUM(h.quantity), 0) FROM stock_holds h CROSS JOIN checkout_sessions s" +
		" WHERE h.holder = s.id AND " + where + " AND s.created_at > ? AND s.trusted = FALSE AND h.expires_at > ?"
	if len(gone) > 0 {
		q += " AND s.id NOT IN (" + database.In(len(gone)) + ")"
		args = database.Strings(args, gone)
	}
	var n int64
	if err := database.QueryRow(tx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("units held from an address: %w", err)
	}
	return n, nil
}

// unverifiedHeld sums, by variant, the live holds on ids of the sessions
// of buyers who are not linked accounts, but those of gone.
func (c *Checkout) unverifiedHeld(tx *gorm.DB, ids, gone []string, now time.Time) (map[string]int64, error) {
	args := database.Strings(make([]any, 0, len(ids)+len(gone)+2), ids)
	args = append(args, now.UTC())
	q := "SELECT h.variant_id, SUM(h.quantity) FROM stock_holds h JOIN checkout_sessions s ON s.id = h.holder" +
		" WHERE h.variant_id IN (" + database.In(len(ids)) + ") AND h.expires_at > ? AND s.trusted = FALSE"
	if len(gone) > 0 {
		q += " AND h.holder NOT IN (" + database.In(len(gone)) + ")"
		args = database.Strings(args, gone)
	}
	out, err := database.Counts(database.Query(tx, q+" GROUP BY h.variant_id", args...))
	if err != nil {
		return nil, fmt.Errorf("units held by unverified buyers: %w", err)
	}
	return out, nil
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

// creationCap refuses, with an unavailable error, a new row of table (what
// names it for the buyer) when its buyer or their client address created
// as many as the policy allows in the last hour. It runs first in the
// transaction that inserts the row, taking the buyer's lock and then the
// address's (the order of holdlimits.go and holdRoom, which take them again).
func (c *Checkout) creationCap(ctx context.Context, tx *gorm.DB, table, what string, b shop.Buyer, now time.Time) error {
	tx = tx.WithContext(ctx)
	l := c.policy.BuyerLimits()
	since := now.Add(-time.Hour)
	key := b.Key()
	if key != "" {
		if err := database.LockKey(tx, "shop.buyer:"+key); err != nil {
			return fmt.Errorf("lock buyer: %w", err)
		}
	}
	// A key of the address alone is the address's: its cap below is theirs.
	if shop.IsHostUser(key) && l.SessionsPerHour < maxPerHour {
		n, err := createdSince(tx, table, "buyer_key = ?", key, since, l.SessionsPerHour)
		if err != nil {
			return err
		}
		if n >= l.SessionsPerHour {
			return shop.Errorf(shop.Unavailable, "", "one buyer may start at most %d %s an hour; use one of the ones already started (update it), or try again later", l.SessionsPerHour, what)
		}
	}
	if b.Address == "" || l.SessionsPerAddressHour >= maxPerHour {
		return nil
	}
	if err := database.LockKey(tx, addressLock(b.Address)); err != nil {
		return fmt.Errorf("lock address: %w", err)
	}
	tiers := []struct {
		where, value, who string
		cap               int64
	}{{"buyer_address = ?", b.Address, "one network address", l.SessionsPerAddressHour * l.forAddress(b.Address).scale}}
	if network := b.Network(); network != "" {
		tiers = append(tiers, struct {
			where, value, who string
			cap               int64
		}{byNetwork, network, "one network (an IPv6 /48)", l.SessionsPerAddressHour * l.forNetwork(network).scale})
	}
	for _, tier := range tiers {
		n, err := createdSince(tx, table, tier.where, tier.value, since, tier.cap)
		if err != nil {
			return err
		}
		if n >= tier.cap {
			return shop.Errorf(shop.Unavailable, "", "at most %d %s may be started an hour from %s; use one of the ones already started (update it), or try again later", tier.cap, what, tier.who)
		}
	}
	return nil
}
