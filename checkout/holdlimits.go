package checkout

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/catalog"
)

// What one buyer may hold at once (the policy's Limits), and a buyer's own
// holds never blocking them.
//
// A session belongs to the buyer who created it (sessionRow.BuyerKey, from
// shop.BuyerFrom): an update by another caller does not change that, and a
// session created without a host user id stays its address's even when
// later calls carry one (adopting the id would let any caller who knows the
// session's id move it between buyers). When a session is priced, in the
// transaction that takes its holds, its buyer's other sessions that hold
// stock are read: those with the same key count toward the limits (units of
// one variant, units in all, sessions holding stock; a session being paid
// included), and those ready for payment of the same person give way to it:
// the same host user id, or the same buyer email when both sessions have
// one. A client address is not a person (every user of a host that sends no
// user id shares its address), so sessions keyed by the same address give
// way to each other only when they have the same buyer email. Never a session
// being paid (in_progress), nor one with an open hosted payment page
// (payment_links): those count toward the limits and keep their holds.
//
// Giving way: a session's units of a variant count as available to its
// buyer's newer one, and when the newer one needs them (the stock would not
// cover both) or the limits would not let both hold, the older ones, least
// recently changed first and no more than needed, lose all their holds and
// become not ready for payment, with an info message saying why and an
// out_of_stock error on $.line_items; updated, such a session takes its
// turn back the same way. A stranger's session never gives way, so nobody
// else can take a hold. The message does not name the newer session: its id
// is all it takes to change it, and the older session may be a stranger's
// that copied the buyer's email.
//
// Under concurrency the limits hold in the database: on PostgreSQL the
// transaction first takes an advisory lock on the buyer's key, so one
// buyer's hold changes run one at a time; on SQLite every write transaction
// takes the database's write lock when it begins (database.Open sets
// _txlock=immediate). A session giving way is written over the version that
// was read, so a concurrent change of it (a claim, an update) makes this
// transaction start again rather than being lost.
//
// A buyer with an empty key (over stdio, or a session from before buyers
// were recorded) has the per-line limit and the per-variant and in-all
// limits applied to the session alone: such sessions share nothing but a
// buyer email.

// emailKey is the email a session's buyer is matched by: in lower case, ""
// without one.
func emailKey(b *Buyer) string {
	if b == nil {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(b.Email))
}

// maxEmailPeers bounds the sessions of other buyers with the same email
// that are read to give way: only an attacker who copies a buyer's email
// would have many.
const maxEmailPeers = 100

// buyerSessions are the other sessions of the buyer of a session being
// priced that hold stock, read in the transaction that prices it.
type buyerSessions struct {
	key    string
	limits Limits
	// others, least recently changed first.
	others []otherSession
}

// otherSession is another session of the buyer that holds stock.
type otherSession struct {
	row sessionRow
	// sameKey: of the same buyer key, so counting toward the limits
	// (otherwise it has the same buyer email).
	sameKey bool
	// yields: ready for payment and not being paid on a payment page, so
	// it gives way to the session being priced.
	yields bool
	// holds are its live holds, by variant.
	holds map[string]int64
}

// buyerSessions reads the other sessions of the buyer of row that hold
// stock, when the holds read with its items (seen) say there are any: the
// buyer is row's key and email, the email of the state being priced.
func (c *Checkout) buyerSessions(ctx context.Context, tx *gorm.DB, row *sessionRow, email string, now time.Time, seen *catalog.HoldView) (*buyerSessions, error) {
	b := &buyerSessions{key: row.BuyerKey, limits: c.policy.BuyerLimits()}
	if row.Trusted {
		b.limits.UnitsPerBuyer = b.limits.UnitsPerAccount // an account that paid: may hold more
	}
	if seen.KeyHolds == 0 && seen.EmailHolds == 0 {
		return b, nil // most buyers: nothing more to read
	}
	tx = tx.WithContext(ctx)
	ids, err := c.catalog.HoldersOf(ctx, tx, row.ID, holdBuyer(row, email), maxEmailPeers)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return b, nil // most buyers: no whole row to read
	}
	var found []sessionRow
	if err := tx.Where("id IN ?", ids).Find(&found).Error; err != nil {
		return nil, fmt.Errorf("buyer's sessions: %w", err)
	}
	// Sessions that hold stock are ready for payment or being paid; of
	// another key, only those of the email that are ready count.
	rows := make([]sessionRow, 0, len(found))
	for _, r := range found {
		switch {
		case r.Status != Ready && r.Status != InProgress:
		case r.BuyerKey != b.key && (r.BuyerEmail != email || r.Status != Ready):
		default:
			rows = append(rows, r)
		}
	}
	holds, err := c.catalog.HoldsOf(ctx, tx, ids)
	if err != nil {
		return nil, err
	}
	var paying []string
	err = tx.Model(&linkRow{}).Where("session_id IN ? AND status = ? AND expires_at > ?", ids, linkOpen, now).
		Distinct().Pluck("session_id", &paying).Error
	if err != nil {
		return nil, fmt.Errorf("buyer's payment pages: %w", err)
	}
	for _, r := range rows {
		if len(holds[r.ID]) == 0 {
			continue // it holds nothing: neither counts nor gives way
		}
		sameKey := b.key != "" && r.BuyerKey == b.key
		// The same person: the same host user, or the same buyer email. A
		// client address is not a person (all of a host's users may share
		// one), so its sessions count toward its limits but never give way
		// to one another, but for the same email.
		person := (sameKey && shop.IsHostUser(b.key)) || (email != "" && r.BuyerEmail == email)
		b.others = append(b.others, otherSession{
			row: r, sameKey: sameKey, holds: holds[r.ID],
			yields: person && r.Status == Ready && now.Before(r.ExpiresAt) && !slices.Contains(paying, r.ID),
		})
	}
	slices.SortFunc(b.others, func(x, y otherSession) int {
		if c := x.row.UpdatedAt.Compare(y.row.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(x.row.ID, y.row.ID)
	})
	return b, nil
}

// yielders are the ids of the sessions that give way, but for those in
// except, least recently changed first.
func (b *buyerSessions) yielders(except []string) []string {
	var out []string
	for _, o := range b.others {
		if o.yields && !slices.Contains(except, o.row.ID) {
			out = append(out, o.row.ID)
		}
	}
	return out
}

// overLine reports whether a line of quantity units, available of them,
// has the limit per line's error rather than out_of_stock: it is over the
// limit, and the limit is within the stock.
func (b *buyerSessions) overLine(quantity, available int64) bool {
	return quantity > b.limits.UnitsPerLine && available >= b.limits.UnitsPerLine
}

// check applies the limits to lines, the cart being priced. It returns the
// problems, with every session that may give way gone (none when the lines
// then fit), and the sessions that must give way for the lines to fit,
// least recently changed first.
func (b *buyerSessions) check(lines []cartLine) ([]Message, []string) {
	var problems []Message
	for i, l := range lines {
		if n := b.limits.UnitsPerLine; l.Quantity > n {
			problems = append(problems, keyed(errorMessage(string(shop.Invalid), quantityPath(i),
				fmt.Sprintf("At most %d units of one item per order; lower the quantity to %d or less.", n, n)),
				KeyLimitUnitsPerLine, "limit", itoa(n)))
		}
	}
	if len(problems) > 0 {
		return problems, nil
	}
	over, release := catalog.CheckLimits(b.holdLimits(), holdLines(lines), b.peers())
	if !over.None() {
		return overMessages(over, b.limits, lines), nil
	}
	return nil, release
}

// holdLimits are the limits on what the buyer holds, in the catalog's
// terms; a buyer without a key has no bound on its sessions.
func (b *buyerSessions) holdLimits() catalog.HoldLimits {
	l := catalog.HoldLimits{UnitsPerVariant: b.limits.UnitsPerVariant, UnitsPerBuyer: b.limits.UnitsPerBuyer}
	if b.key != "" {
		l.OpenSessions = b.limits.OpenSessions
	}
	return l
}

// peers are the buyer's other sessions as the catalog's holders, least
// recently changed first.
func (b *buyerSessions) peers() []catalog.HoldPeer {
	out := make([]catalog.HoldPeer, len(b.others))
	for i, o := range b.others {
		out[i] = catalog.HoldPeer{Holder: o.row.ID, Holds: o.holds, Counts: o.sameKey, Yields: o.yields, Paying: o.row.Status == InProgress}
	}
	return out
}

// holdLines are lines as the catalog holds them.
func holdLines(lines []cartLine) []catalog.HoldLine {
	out := make([]catalog.HoldLine, len(lines))
	for i, l := range lines {
		out[i] = catalog.HoldLine{VariantID: l.VariantID, Quantity: l.Quantity}
	}
	return out
}

// overMessages are the errors of the limits o breaks, in words.
func overMessages(o catalog.OverLimits, l Limits, lines []cartLine) []Message {
	var out []Message
	for i, line := range lines {
		other, ok := o.Lines[i]
		if !ok {
			continue
		}
		text := fmt.Sprintf("At most %d units of %s may be held for one buyer at once", l.UnitsPerVariant, line.Name)
		if other > 0 {
			text += fmt.Sprintf(", and your %s hold %d", othersOf(o), other)
		}
		key, params := KeyLimitUnitsPerVariant, []string{"limit", itoa(l.UnitsPerVariant), "name", line.Name, "held_elsewhere", itoa(other)}
		switch left := l.UnitsPerVariant - other; {
		case left > 0:
			text += fmt.Sprintf("; lower the quantity to %d or less.", left)
			params = append(params, "max_quantity", itoa(left))
		case o.Paying:
			text += "; remove it, or add it again once those payments are done."
			key = KeyLimitVariantPaying
		default:
			text += "; remove it, or pay for or cancel your other checkout sessions first."
			key = KeyLimitVariantOthers
		}
		out = append(out, keyed(errorMessage(string(shop.Invalid), quantityPath(i), text), key, params...))
	}
	if o.Units > 0 {
		text := fmt.Sprintf("At most %d units in all may be held for one buyer at once; this session has %d", l.UnitsPerBuyer, o.Units)
		if o.OtherUnits > 0 {
			text += fmt.Sprintf(" and your %s hold %d", othersOf(o), o.OtherUnits)
		}
		out = append(out, keyed(errorMessage(string(shop.Invalid), "$.line_items", text+". Remove items or lower their quantities."),
			KeyLimitUnitsPerBuyer, "limit", itoa(l.UnitsPerBuyer), "units", itoa(o.Units), "held_elsewhere", itoa(o.OtherUnits)))
	}
	if o.Sessions > 0 {
		text := fmt.Sprintf("At most %s may hold items for one buyer at once, and %d of yours are being paid; update this session again once those payments are done.",
			sessionCount(l.OpenSessions), o.Sessions)
		key := KeyLimitOpenSessionsPaying
		if !o.Paying {
			key = KeyLimitOpenSessions
			text = fmt.Sprintf("At most %s may hold items for one buyer at once, and %d of yours do; pay for or cancel one of them (cancel_checkout_session), or change one of them with update_checkout_session instead of starting another.",
				sessionCount(l.OpenSessions), o.Sessions)
		}
		out = append(out, keyed(errorMessage(string(shop.Invalid), "$.line_items", text),
			key, "limit", itoa(l.OpenSessions), "sessions", itoa(o.Sessions)))
	}
	return out
}

// othersOf names the buyer's other sessions that count toward the limits.
func othersOf(o catalog.OverLimits) string {
	if o.Paying {
		return "checkout sessions being paid"
	}
	return "other checkout sessions"
}

func quantityPath(line int) string { return fmt.Sprintf("$.line_items[%d].item.quantity", line) }

// sessionCount is "1 checkout session", "5 checkout sessions".
func sessionCount(n int64) string {
	if n == 1 {
		return "1 checkout session"
	}
	return fmt.Sprintf("%d checkout sessions", n)
}

// hold takes the holds of row, priced into lines without a problem, until
// its expiry (as being paid until paying, when set: the claim): the buyer's
// sessions in release give way, and those of b that may give way do as the
// stock needs (holdlimits.go). seen is what the catalog read with the
// items. It returns an out_of_stock problem per line that falls short
// (none: all are held).
func (c *Checkout) hold(ctx context.Context, tx *gorm.DB, row *sessionRow, email string, b *buyerSessions, release []string, lines []cartLine, seen *catalog.HoldView, now, paying time.Time) ([]Message, error) {
	req := catalog.HoldRequest{Holder: row.ID, Buyer: holdBuyer(row, email), Lines: holdLines(lines), Until: row.ExpiresAt,
		Yield: b.yielders(release), Release: release, Seen: seen}
	if !paying.IsZero() {
		req.Until, req.Paying = paying, true
	}
	res, err := c.catalog.Hold(ctx, tx, req)
	if err != nil {
		return nil, err
	}
	var short []Message
	for _, s := range res.Short {
		i := slices.IndexFunc(lines, func(l cartLine) bool { return l.VariantID == s.VariantID })
		short = append(short, outOfStock(i, lines[i].Name, s.Available))
	}
	return short, c.gaveWay(ctx, tx, b, release, res.Released, now)
}

// holdBuyer is the buyer of row's holds, email the one of the state being
// priced.
func holdBuyer(row *sessionRow, email string) catalog.HoldBuyer {
	return catalog.HoldBuyer{Key: row.BuyerKey, Email: email, Address: row.BuyerAddress, Network: row.BuyerNetwork, Trusted: row.Trusted}
}

// gaveWay records, in tx, that the sessions released lost their holds to
// the session priced (the catalog dropped them): each becomes not ready for
// payment, saying why, over the version that was read (errConflict when it
// changed since). limited are the sessions that gave way for the limits,
// the others gave way for the stock.
func (c *Checkout) gaveWay(ctx context.Context, tx *gorm.DB, b *buyerSessions, limited, released []string, now time.Time) error {
	for _, id := range released {
		i := slices.IndexFunc(b.others, func(o otherSession) bool { return o.row.ID == id })
		if i < 0 {
			return fmt.Errorf("session %s gave way but was not read", id)
		}
		r := b.others[i].row
		moved := keyed(infoMessage("", "", "Its items were moved to your newer checkout session, which needed units this one held: the stock would not cover both."), KeyStockMoved)
		if slices.Contains(limited, id) {
			l := b.limits
			moved = keyed(infoMessage("", "", fmt.Sprintf("Its items were moved to your newer checkout session: one buyer may hold at most %d units of one item, %d units in all and %s at once.",
				l.UnitsPerVariant, l.UnitsPerBuyer, sessionCount(l.OpenSessions))),
				KeyStockMovedLimits, "units_per_variant", itoa(l.UnitsPerVariant), "units_per_buyer", itoa(l.UnitsPerBuyer), "open_sessions", itoa(l.OpenSessions))
		}
		r.addMessages(moved, keyed(errorMessage(string(shop.OutOfStock), "$.line_items",
			"Nothing is held for this session any more; update it to hold its items again, or cancel it."), KeyStockReleased))
		r.Status, r.UpdatedAt = NotReady, now
		// Over the version read: errConflict when it changed since.
		if err := c.save(tx.WithContext(ctx), &r); err != nil {
			return err
		}
	}
	return nil
}
