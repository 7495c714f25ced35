package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"gorm.io/gorm"

	"shop"
	"shop/database"
)

// What the limits on holding need, read with the items being held
// (docs/architecture.md, "Stock and holds"): the units others hold of each
// variant, the holder's own holds, what the unverified buyers hold of each
// variant, whether the buyer holds through other sessions, and what the
// unverified buyers of the buyer's address and IPv6 /48 hold. Checkout
// turns these into its limits and messages.

// HoldBuyer is who holds: recorded on every hold, so that the limits are
// answered from stock_holds alone.
type HoldBuyer struct {
	// Key is the buyer's key (a host's user id, a linked account, else
	// the client address); Email the buyer's email, in lower case.
	Key, Email string
	// Address is the client address (an IPv4 address or an IPv6 /64) and
	// Network its IPv6 /48 ("" for IPv4).
	Address, Network string
	// Trusted buyers (a linked account that had paid) are left out of the
	// address's and the unverified buyers' sums.
	Trusted bool
}

// HoldView is what ItemsToHold read, in the transaction that takes the
// holds: Hold decides from it, and checkout's limits are measured with it.
type HoldView struct {
	// Items are the variants read, by id, their Available counting the
	// holds of everyone but the holders ItemsToHold was asked about.
	Items map[string]Item
	// Others sums, by variant, the live holds of everyone but those
	// holders; Unverified the part of it untrusted buyers hold.
	Others, Unverified map[string]int64
	// Mine are the holder's live holds by variant, and MineRows its rows
	// of stock_holds, live or expired.
	Mine     map[string]int64
	MineRows int64
	// KeyHolds and EmailHolds count the live holds of other holders with
	// the buyer's key or email: when both are 0 the buyer holds through no
	// other session.
	KeyHolds, EmailHolds int64
	// AddressUnits and NetworkUnits sum the live holds of other holders
	// with the buyer's address and /48 that are not trusted.
	AddressUnits, NetworkUnits int64
	// Bounded is whether Unverified, AddressUnits and NetworkUnits were
	// read (ItemsToHold), or left out (ItemsToPrice, Items).
	Bounded bool
}

// AddressLock is the key of the lock (database.LockKey) that makes the
// counts of what an address holds and creates one at a time: its IPv6
// /48's, which covers the /64 and every other /64 of the /48, or the IPv4
// address's own.
func AddressLock(addr string) string {
	if network := shop.NetworkOf(addr); network != "" {
		return "shop.network:" + network
	}
	return "shop.address:" + addr
}

// BuyerLock is the key of the lock (database.LockKey) that makes one
// buyer's hold changes one at a time.
func BuyerLock(key string) string { return "shop.buyer:" + key }

// ItemsToHold reads, in tx, the variants with the given ids that exist and
// are not removed, with the holds they carry (HoldView), for holders[0]
// holding them for buyer: holds of every one of holders count as
// available. On PostgreSQL it first takes the buyer's, the address's and
// each variant's advisory locks (in that order: never in a cycle) and the
// variants' row locks; on SQLite the transaction holds the write lock, and
// it is one statement. tx nil reads outside a transaction.
func (c *Catalog) ItemsToHold(ctx context.Context, tx *gorm.DB, holders []string, buyer HoldBuyer, ids []string) (*HoldView, error) {
	return c.lockedView(ctx, tx, holders, buyer, ids, viewBounds)
}

// ItemsToPrice is ItemsToHold without the sums that bound untrusted buyers
// (HoldView.Bounded is false): for a transaction that takes no holds those
// bounds could refuse, such as a session without an address to ship to, or
// one keeping its holds while it is paid. On PostgreSQL it takes the
// buyer's lock and the variants' rows, not the address's and shares' locks.
func (c *Catalog) ItemsToPrice(ctx context.Context, tx *gorm.DB, holders []string, buyer HoldBuyer, ids []string) (*HoldView, error) {
	return c.lockedView(ctx, tx, holders, buyer, ids, viewHolder)
}

// lockedView reads part of the view in tx after the locks it needs on
// PostgreSQL (lockHolding): ItemsToHold and ItemsToPrice.
func (c *Catalog) lockedView(ctx context.Context, tx *gorm.DB, holders []string, buyer HoldBuyer, ids []string, part viewPart) (*HoldView, error) {
	tx = c.conn(ctx, tx)
	if database.DialectOfDB(tx) == database.Postgres {
		if err := lockHolding(tx, buyer, ids, part >= viewBounds); err != nil {
			return nil, err
		}
	}
	return c.view(tx, holders, buyer, ids, part)
}

// Items returns the variants with the given ids that exist and are not
// removed, by id, their Available counting every live hold. db is the
// transaction to read in, or nil.
func (c *Catalog) Items(ctx context.Context, db *gorm.DB, ids []string) (map[string]Item, error) {
	v, err := c.view(c.conn(ctx, db), nil, HoldBuyer{}, ids, viewItems)
	if err != nil {
		return nil, err
	}
	return v.Items, nil
}

// lockHolding takes, on PostgreSQL, the advisory locks of a buyer holding
// the variants ids, and the variants' rows; with bounds, for an untrusted
// buyer, the locks of the sums that bound it too (its address's, and each
// variant's unverified share).
func lockHolding(tx *gorm.DB, buyer HoldBuyer, ids []string, bounds bool) error {
	keys := []string{}
	if buyer.Key != "" {
		keys = append(keys, BuyerLock(buyer.Key))
	}
	if bounds && !buyer.Trusted {
		if buyer.Address != "" {
			keys = append(keys, AddressLock(buyer.Address))
		}
		for _, id := range slices.Sorted(slices.Values(ids)) {
			keys = append(keys, "shop.share:"+id)
		}
	}
	for _, k := range keys {
		if err := database.LockKey(tx, k); err != nil {
			return fmt.Errorf("lock holds: %w", err)
		}
	}
	// A statement reads the holds as they were when it started, and FOR
	// UPDATE may wait for a transaction that adds some: the sums are read
	// after the rows are locked, in a statement of its own.
	_, err := lockStock(tx, ids)
	return err
}

// viewPart is how much of the holds view reads: each part has the ones
// before it.
type viewPart int

const (
	viewItems  viewPart = iota // the variants, with what everyone holds of them
	viewHolder                 // the holder's own holds and the buyer's other holders (the limits)
	viewBounds                 // what untrusted buyers hold (Unreserved)
)

// viewShape is what the text of view's statement depends on: how many
// holders it leaves out of the sums, how many variants it reads, which part.
type viewShape struct {
	holders, variants int
	part              viewPart
}

// viewSQLs keeps the statements of the view's usual shapes (a session's
// holder or two, up to maxKeptViewLines variants), built once each.
var viewSQLs sync.Map // viewShape → string

// maxKeptViewLines bounds the variants of a view whose statement is kept.
const maxKeptViewLines = 64

// viewSQL is the statement of view for n holders left out of the sums and
// m variants, reading part.
func viewSQL(n, m int, part viewPart) string {
	shape := viewShape{n, m, part}
	if q, ok := viewSQLs.Load(shape); ok {
		return q.(string)
	}
	q := buildViewSQL(n, m, part)
	if n <= 2 && m <= maxKeptViewLines {
		viewSQLs.Store(shape, q)
	}
	return q
}

// buildViewSQL writes the statement viewSQL answers.
func buildViewSQL(n, m int, part viewPart) string {
	others := "h.holder NOT IN (" + database.In(max(n, 1)) + ")"
	var b strings.Builder
	b.WriteString("SELECT v.id, v.product_id, v.title, v.image, v.price, v.stock, p.title, p.images, SUBSTR(p.description, 1, 400)")
	b.WriteString(", COALESCE((SELECT SUM(h.quantity) FROM stock_holds h WHERE h.variant_id = v.id AND " + others + " AND h.expires_at > ?), 0)")
	if part >= viewHolder {
		b.WriteString(", COALESCE((SELECT SUM(h.quantity) FROM stock_holds h WHERE h.holder = ? AND h.variant_id = v.id AND h.expires_at > ?), 0)")
		b.WriteString(", (SELECT COUNT(*) FROM stock_holds h WHERE h.holder = ?)")
		b.WriteString(", (SELECT COUNT(*) FROM stock_holds h WHERE h.buyer_key = ? AND h.buyer_key <> '' AND " + others + " AND h.expires_at > ?)")
		b.WriteString(", (SELECT COUNT(*) FROM stock_holds h WHERE h.buyer_email = ? AND h.buyer_email <> '' AND " + others + " AND h.expires_at > ?)")
	}
	if part >= viewBounds {
		b.WriteString(", COALESCE((SELECT SUM(h.quantity) FROM stock_holds h WHERE h.variant_id = v.id AND h.trusted = FALSE AND " + others + " AND h.expires_at > ?), 0)")
		b.WriteString(", COALESCE((SELECT SUM(h.quantity) FROM stock_holds h WHERE h.buyer_address = ? AND h.buyer_address <> '' AND h.trusted = FALSE AND " + others + " AND h.expires_at > ?), 0)")
		b.WriteString(", COALESCE((SELECT SUM(h.quantity) FROM stock_holds h WHERE h.buyer_network = ? AND h.buyer_network <> '' AND h.trusted = FALSE AND " + others + " AND h.expires_at > ?), 0)")
	}
	b.WriteString(" FROM variants v JOIN products p ON p.id = v.product_id WHERE v.id IN (" + database.In(m) + ") AND v.removed = ?")
	return b.String()
}

// view reads the variants ids with their holds: one statement, the sums
// as subqueries per row (those that name no variant run once).
func (c *Catalog) view(db *gorm.DB, holders []string, buyer HoldBuyer, ids []string, part viewPart) (*HoldView, error) {
	except := holders
	if len(except) == 0 {
		except = []string{""}
	}
	now := c.now().UTC()
	// sums appends the arguments of a sum: its values, the holders left
	// out, the time.
	sums := func(args []any, values ...any) []any {
		return append(database.Strings(append(args, values...), except), now)
	}
	args := sums(make([]any, 0, 32))
	mine := ""
	if len(holders) > 0 {
		mine = holders[0]
	}
	if part >= viewHolder {
		args = append(args, mine, now, mine)
		args = sums(args, buyer.Key)
		args = sums(args, buyer.Email)
	}
	if part >= viewBounds {
		args = sums(args)
		args = sums(args, buyer.Address)
		args = sums(args, buyer.Network)
	}
	args = append(database.Strings(args, ids), false)
	rows, err := database.Query(db, viewSQL(len(except), len(ids), part), args...)
	if err != nil {
		return nil, fmt.Errorf("look up variants: %w", err)
	}
	defer rows.Close()
	v := &HoldView{Items: make(map[string]Item, len(ids)), Others: map[string]int64{}, Unverified: map[string]int64{}, Mine: map[string]int64{},
		Bounded: part >= viewBounds}
	for rows.Next() {
		var it Item
		var title, image, productTitle, productImages, description string
		var others, unverified, mine int64
		dest := []any{&it.VariantID, &it.ProductID, &title, &image, &it.Price, &it.OnHand, &productTitle, &productImages, &description, &others}
		if part >= viewHolder {
			dest = append(dest, &mine, &v.MineRows, &v.KeyHolds, &v.EmailHolds)
		}
		if part >= viewBounds {
			dest = append(dest, &unverified, &v.AddressUnits, &v.NetworkUnits)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("look up variants: %w", err)
		}
		it.Name = productTitle
		if title != "" && title != "Default" {
			it.Name += " — " + title
		}
		it.Description = lineDescription(description)
		it.Images = c.images(productImages)
		if image != "" {
			it.Images = append([]string{c.imageURL(image)}, it.Images...)
		}
		it.Available = max(0, it.OnHand-others)
		v.Items[it.VariantID], v.Others[it.VariantID] = it, others
		if unverified > 0 {
			v.Unverified[it.VariantID] = unverified
		}
		if mine > 0 {
			v.Mine[it.VariantID] = mine
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("look up variants: %w", err)
	}
	return v, nil
}

// HoldersOf are the other holders (but holder) with live holds for the
// buyer's key, and at most peers of those for the buyer's email. db is the
// transaction to read in.
func (c *Catalog) HoldersOf(ctx context.Context, db *gorm.DB, holder string, buyer HoldBuyer, peers int) ([]string, error) {
	db = db.WithContext(ctx)
	now := c.now().UTC()
	var out []string
	if buyer.Key != "" {
		if err := db.Model(&holdRow{}).Where("buyer_key = ? AND buyer_key <> '' AND holder <> ? AND expires_at > ?", buyer.Key, holder, now).
			Distinct().Pluck("holder", &out).Error; err != nil {
			return nil, fmt.Errorf("buyer's holders: %w", err)
		}
	}
	if buyer.Email != "" {
		var byEmail []string
		if err := db.Model(&holdRow{}).Where("buyer_email = ? AND buyer_email <> '' AND holder <> ? AND expires_at > ?", buyer.Email, holder, now).
			Distinct().Order("holder").Limit(peers).Pluck("holder", &byEmail).Error; err != nil {
			return nil, fmt.Errorf("buyer's holders: %w", err)
		}
		for _, h := range byEmail {
			if !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	}
	return out, nil
}

// lockStock reads the stock on hand of the variants with the given ids,
// locking their rows (PostgreSQL: FOR UPDATE; SQLite: the write lock the
// transaction took when it began) in id order, so that two transactions
// never wait on each other in a cycle.
func lockStock(tx *gorm.DB, ids []string) (map[string]int64, error) {
	ids = slices.Sorted(slices.Values(ids))
	onHand, err := database.Counts(database.Query(tx, "SELECT id, stock FROM variants WHERE id IN ("+database.In(len(ids))+") ORDER BY id"+database.ForUpdate(tx),
		database.Strings(make([]any, 0, len(ids)), ids)...))
	if err != nil {
		return nil, fmt.Errorf("lock variants: %w", err)
	}
	return onHand, nil
}

// HoldLimits bound what one buyer may hold at once (the merchant's policy,
// docs/limits.md).
type HoldLimits struct {
	// UnitsPerVariant and UnitsPerBuyer bound the units of one variant,
	// and in all, the holder and the peers that count hold together.
	UnitsPerVariant, UnitsPerBuyer int64
	// OpenSessions bounds the holders that count, the holder included;
	// 0, none.
	OpenSessions int64
	// AddressUnits and NetworkUnits bound what the untrusted buyers of the
	// buyer's address and /48 hold together; 0, none.
	AddressUnits, NetworkUnits int64
	// UnverifiedShare is the percent of a variant's stock on hand the
	// untrusted buyers may hold together (at least one unit); 100 or
	// more, no bound.
	UnverifiedShare int64
}

// HoldPeer is another holder of the same buyer.
type HoldPeer struct {
	Holder string
	// Holds are its live holds, by variant.
	Holds map[string]int64
	// Counts: its holds count toward the limits (the same buyer key).
	Counts bool
	// Yields: it may give way to the holder.
	Yields bool
	// Paying: its holds are being paid.
	Paying bool
}

// OverLimits are the limits some lines would break.
type OverLimits struct {
	// Lines are the lines over UnitsPerVariant, by index, with what the
	// peers that count hold of their variant.
	Lines map[int]int64
	// Units and OtherUnits are the lines' units and the peers', when over
	// UnitsPerBuyer.
	Units, OtherUnits int64
	// Sessions are the peers that count, when over OpenSessions.
	Sessions int64
	// Paying is true when every peer counted is being paid, so the buyer
	// can only wait for those payments.
	Paying bool
}

// None reports whether no limit is broken.
func (o OverLimits) None() bool { return len(o.Lines) == 0 && o.Units == 0 && o.Sessions == 0 }

// CheckLimits measures lines against l with the buyer's peers, least
// recently changed first. over is what the lines break with every peer
// that may give way gone (none: they fit); release, when they fit, the
// fewest peers that must give way for them to, least recently changed
// first.
func CheckLimits(l HoldLimits, lines []HoldLine, peers []HoldPeer) (over OverLimits, release []string) {
	gone := map[string]bool{}
	for _, p := range peers {
		if p.Counts && p.Yields {
			gone[p.Holder] = true
		}
	}
	if over := l.over(lines, peers, gone); !over.None() {
		return over, nil
	}
	clear(gone)
	for _, p := range peers {
		over := l.over(lines, peers, gone)
		if over.None() {
			break
		}
		if gone[p.Holder] || !p.Counts || !p.Yields || !over.eases(p, lines) {
			continue
		}
		gone[p.Holder] = true
		release = append(release, p.Holder)
	}
	return OverLimits{}, release
}

// eases reports whether p giving way brings lines closer to the limits
// they break.
func (o OverLimits) eases(p HoldPeer, lines []HoldLine) bool {
	if o.Units > 0 || o.Sessions > 0 {
		return true
	}
	for i := range o.Lines {
		if p.Holds[lines[i].VariantID] > 0 {
			return true
		}
	}
	return false
}

// over measures lines against the limits, counting the holds of the peers
// that count but those gone.
func (l HoldLimits) over(lines []HoldLine, peers []HoldPeer, gone map[string]bool) OverLimits {
	out := OverLimits{Lines: map[int]int64{}, Paying: true}
	var units, otherUnits, sessions int64
	for i, line := range lines {
		var other int64
		for _, p := range peers {
			if p.Counts && !gone[p.Holder] {
				other += p.Holds[line.VariantID]
			}
		}
		if line.Quantity+other > l.UnitsPerVariant {
			out.Lines[i] = other
		}
		units += line.Quantity
	}
	for _, p := range peers {
		if !p.Counts || gone[p.Holder] {
			continue
		}
		sessions++
		for _, n := range p.Holds {
			otherUnits += n
		}
		out.Paying = out.Paying && p.Paying
	}
	if units+otherUnits > l.UnitsPerBuyer {
		out.Units, out.OtherUnits = units, otherUnits
	}
	if l.OpenSessions > 0 && sessions+1 > l.OpenSessions {
		out.Sessions = sessions
	}
	return out
}

// Unreserved says why lines may not be held for an untrusted buyer: what
// the buyer's address (Bound "address"), its /48 ("network") or the
// untrusted buyers of a variant ("share", VariantID) would hold past
// Limit, Held being held there already.
type Unreserved struct {
	Bound       string
	Limit, Held int64
	VariantID   string
}

// Unreserved measures lines against the bounds of l on untrusted buyers
// with the sums v read (leaving out the holders v was read for), which
// ItemsToHold reads (v.Bounded): nil when they may be held, or buyer is
// trusted.
func (v *HoldView) Unreserved(l HoldLimits, buyer HoldBuyer, lines []HoldLine) *Unreserved {
	if buyer.Trusted {
		return nil
	}
	var units int64
	for _, line := range lines {
		units += line.Quantity
	}
	if buyer.Address != "" && l.AddressUnits > 0 && v.AddressUnits+units > l.AddressUnits {
		return &Unreserved{Bound: "address", Limit: l.AddressUnits, Held: v.AddressUnits}
	}
	if buyer.Network != "" && l.NetworkUnits > 0 && v.NetworkUnits+units > l.NetworkUnits {
		return &Unreserved{Bound: "network", Limit: l.NetworkUnits, Held: v.NetworkUnits}
	}
	if l.UnverifiedShare >= 100 {
		return nil
	}
	for _, line := range lines {
		if limit := max(1, v.Items[line.VariantID].OnHand*l.UnverifiedShare/100); v.Unverified[line.VariantID]+line.Quantity > limit {
			return &Unreserved{Bound: "share", Limit: limit, Held: v.Unverified[line.VariantID], VariantID: line.VariantID}
		}
	}
	return nil
}
