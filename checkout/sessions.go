package checkout

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/database"
	"shop/orders"
)

// Request is what create_checkout_session and update_checkout_session send;
// a nil field is left as it is.
type Request struct {
	// Items replaces the cart.
	Items *[]Item
	Buyer *Buyer
	// Address is the shipping address.
	Address *Address
	// OptionID chooses a shipping option.
	OptionID *string
	// PromoCode applies a promotion; "" removes it. An unknown code is an
	// error (/mcp's promo_code).
	PromoCode *string
	// PromoCodes, when not nil, replace the codes (the dialects' discount
	// extensions): [] removes them; a code no promotion has, or one that does
	// not apply, is kept and reported as rejected (Session.Discounts), not an
	// error. It wins over PromoCode.
	PromoCodes *[]string
	// Metadata replaces the session's metadata.
	Metadata map[string]string
	// SaveAddress, for a linked buyer only, says whether completing the
	// session saves its address to their account.
	SaveAddress *bool
}

// errConflict is a lost race on a session's version; the caller retries.
var errConflict = errors.New("session changed concurrently")

var promoPattern = regexp.MustCompile(`^[A-Z0-9_-]{3,32}$`)

// Create opens a checkout session for req.
//
// Errors: missing or invalid $.items (none, empty, over 50 lines, a quantity
// outside 1–999, an unknown or repeated variant id), invalid $.buyer.*,
// $.fulfillment_address.* (too long), $.promo_code (unknown), $.metadata.
func (c *Checkout) Create(ctx context.Context, req Request) (*Session, error) {
	if req.Items == nil {
		return nil, shop.Errorf(shop.Missing, "$.items", `send the variants to buy, such as [{"id": "enamel-camp-mug-slate", "quantity": 1}]; get variant ids from get_product`)
	}
	req, err := c.accountDefaults(ctx, req)
	if err != nil {
		return nil, err
	}
	var st state
	if err := c.apply(&st, req); err != nil {
		return nil, err
	}
	now := c.now().UTC()
	buyer := shop.BuyerFrom(ctx)
	if err := applySave(&st, req, buyer.Key()); err != nil {
		return nil, err
	}
	fresh := sessionRow{ID: newSessionID(), Version: 1, Currency: c.policy.Currency().Code(), OrderID: orders.NewID(), CreatedAt: now,
		BuyerKey: buyer.Key(), BuyerAddress: buyer.Address, BuyerNetwork: buyer.Network(), Channel: string(shop.ChannelFrom(ctx)), Locale: shop.LocaleFrom(ctx)}
	var row sessionRow
	// errConflict: a session of the buyer's that gave way changed meanwhile.
	err = retryConflicts(func() error {
		return c.transact(ctx, func(tx *gorm.DB) error {
			row = fresh
			if err := lockCreator(tx, buyer); err != nil {
				return err
			}
			if row.Trusted, err = c.trusted(ctx, tx, buyer); err != nil {
				return err
			}
			if _, err := c.reprice(ctx, tx, &row, st, now); err != nil {
				return err
			}
			if err := c.insertCapped(tx, &row, buyer, now); err != nil {
				return err
			}
			c.noteMove(tx, "", row.Status, 1)
			return nil
		})
	})
	if errors.Is(err, errConflict) {
		return nil, shop.Errorf(shop.Conflict, "$.items", "the buyer's other checkout sessions are being changed by other requests right now; retry")
	}
	if err != nil {
		return nil, err
	}
	c.known.keep(&row)
	return c.session(ctx, &row)
}

// Update changes a session as req says and prices it again. An update that
// changes nothing (same fields, same values, same figures) leaves the session
// as it is and does not move its expiry.
//
// Errors: those of Create, and not_found or invalid $.checkout_session_id
// (a session that is completed, canceled, expired or being paid), conflict
// when it keeps changing under us.
func (c *Checkout) Update(ctx context.Context, id string, req Request) (*Session, error) {
	return c.change(ctx, id, func(tx *gorm.DB, row *sessionRow) error {
		if err := c.writable(row); err != nil {
			return err
		}
		st := row.state()
		if err := c.apply(&st, req); err != nil {
			return err
		}
		if err := applySave(&st, req, row.BuyerKey); err != nil {
			return err
		}
		was := *row
		unchanged, err := c.reprice(ctx, tx, row, st, database.Now(tx))
		if err != nil {
			return err
		}
		if unchanged {
			// An update that changes nothing (the same fields with the
			// same values, priced the same) leaves the session as it is:
			// its expiry, its holds and its messages.
			*row = was
			return errUnchanged
		}
		return nil
	})
}

// Get returns a session.
//
// Errors: missing, invalid or not_found $.checkout_session_id (not_found
// too for a linked buyer's session read by anyone else, see owned).
func (c *Checkout) Get(ctx context.Context, id string) (*Session, error) {
	row, err := c.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := owned(ctx, row); err != nil {
		return nil, err
	}
	return c.session(ctx, row)
}

// Cancel ends a session and releases the stock it holds. Canceling a
// canceled or expired session returns it as it is.
//
// Errors: those of Get, and invalid $.checkout_session_id for a session that
// is completed or being paid.
func (c *Checkout) Cancel(ctx context.Context, id string) (*Session, error) {
	return c.change(ctx, id, func(tx *gorm.DB, row *sessionRow) error {
		switch err := c.writable(row); shop.ErrorCode(err) {
		case "":
		case shop.Expired:
			return errUnchanged
		default:
			if row.Status == Canceled {
				return errUnchanged
			}
			return err
		}
		if err := c.catalog.Release(ctx, tx, row.ID); err != nil {
			return err
		}
		row.Status, row.UpdatedAt = Canceled, database.Now(tx)
		return nil
	})
}

// errUnchanged tells change that the session stays as it is.
var errUnchanged = errors.New("session unchanged")

// change reads a session, lets fn change its row inside a transaction and
// saves it over the version it read; it starts again on fresh state when
// another writer got there first. fn returns errUnchanged, with row as it
// was read, to leave the session as it is (what fn wrote is rolled back).
// The row read is the one this process wrote last when it keeps it
// (known.go), unchecked until the save, else the row as it is now.
func (c *Checkout) change(ctx context.Context, id string, fn func(tx *gorm.DB, row *sessionRow) error) (*Session, error) {
	var row *sessionRow
	err := retryConflicts(func() error {
		read := c.known.get(id)
		kept := read != nil
		if !kept {
			var err error
			if read, err = c.load(ctx, id); err != nil {
				return err
			}
		}
		// Its owner never changes: the row as read says whose it is.
		if err := owned(ctx, read); err != nil {
			return err
		}
		c.faultAt("change")
		row = new(sessionRow)
		err := c.transact(ctx, func(tx *gorm.DB) error {
			*row = *read // a transaction run again starts from the row as read
			if err := fn(tx, row); err != nil {
				return err
			}
			noteLocale(ctx, row)
			return c.save(tx, row)
		})
		switch {
		case errors.Is(err, errConflict):
			c.known.forget(id)
		case kept:
			err = c.keptStill(ctx, id, read.Version, err)
		}
		if errors.Is(err, errUnchanged) {
			err = nil
		}
		if err == nil {
			c.known.keep(row)
		}
		return err
	})
	if errors.Is(err, errConflict) {
		return nil, shop.Errorf(shop.Conflict, "$.checkout_session_id", "the session is being changed by another request right now; get it again and retry")
	}
	if err != nil {
		return nil, err
	}
	return c.session(ctx, row)
}

// load reads a session's row.
func (c *Checkout) load(ctx context.Context, id string) (*sessionRow, error) {
	if id == "" {
		return nil, shop.Errorf(shop.Missing, "$.checkout_session_id", "send the id of a checkout session (cs_…), as create_checkout_session returned it")
	}
	if len(id) > maxSessionIDLen || !strings.HasPrefix(id, "cs_") {
		return nil, shop.Errorf(shop.Invalid, "$.checkout_session_id", "not a checkout session id; send the id create_checkout_session returned (cs_…)")
	}
	row, err := readRow(database.ShortRead(c.db.WithContext(ctx)), id)
	if isNotFound(err) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	return row, nil
}

// notFound is the error for a session id no session has.
func notFound(id string) error {
	return shop.Errorf(shop.NotFound, "$.checkout_session_id", "no checkout session has id %q; create one with create_checkout_session", id)
}

// writable refuses changes to a session that has ended or is being paid.
func (c *Checkout) writable(row *sessionRow) error {
	status := row.Status
	if (status == Ready || status == NotReady) && !c.now().Before(row.ExpiresAt) {
		status = Expired
	}
	switch status {
	case Completed:
		return shop.Errorf(shop.Invalid, "$.checkout_session_id", "this session is completed and can no longer change; start a new one with create_checkout_session")
	case Canceled:
		return shop.Errorf(shop.Invalid, "$.checkout_session_id", "this session was canceled; start a new one with create_checkout_session")
	case Expired:
		return shop.Errorf(shop.Expired, "$.checkout_session_id", "this session expired and its items were released; start a new one with create_checkout_session")
	case InProgress:
		return shop.Errorf(shop.Invalid, "$.checkout_session_id", "this session's payment is being processed; it cannot change now")
	}
	return nil
}

// jsonColumn is a NOT NULL JSON column's value as sessionRow's gorm
// serializer writes it: the JSON, or "" for an absent value (null).
func jsonColumn(v any) string {
	if s := marshal(v); s != "null" {
		return s
	}
	return ""
}

// apply validates req and merges it into st, setting st.changed when a value
// differs from the session's. Input that cannot be right whatever the
// catalog holds is refused here, before anything is written.
func (c *Checkout) apply(st *state, req Request) error {
	if req.Items != nil {
		items := *req.Items
		if err := checkItems(items); err != nil {
			return err
		}
		st.changed = st.changed || !slices.Equal(st.Items, items)
		st.Items = append([]Item{}, items...)
	}
	if req.Buyer != nil {
		b := *req.Buyer
		if err := checkBuyer(&b); err != nil {
			return err
		}
		st.changed = st.changed || st.Buyer == nil || *st.Buyer != b
		st.Buyer = &b
	}
	if req.Address != nil {
		a := *req.Address
		if err := checkAddressBounds(&a); err != nil {
			return err
		}
		normalizeAddress(&a)
		st.changed = st.changed || st.Address == nil || *st.Address != a
		st.Address = &a
	}
	if req.OptionID != nil {
		if len(*req.OptionID) > maxOptionIDLen {
			return shop.Errorf(shop.Invalid, "$.fulfillment_option_id", "send the id of one of fulfillment_options")
		}
		st.changed = st.changed || st.OptionID != *req.OptionID
		st.OptionID, st.optionSent = *req.OptionID, true
	}
	if req.PromoCode != nil {
		code := strings.ToUpper(strings.TrimSpace(*req.PromoCode))
		if code != "" {
			if !promoPattern.MatchString(code) {
				return shop.Errorf(shop.Invalid, "$.promo_code", "not a promotion code: codes are 3 to 32 letters, digits, - or _; send \"\" to remove one").
					Keyed(KeyPromoMalformed, "code_typed", code)
			}
			if _, ok := c.policy.Promotion(code); !ok {
				return shop.Errorf(shop.Invalid, "$.promo_code", "no promotion has code %q; check the spelling with the buyer, or send \"\" for none", code).
					Keyed(KeyPromoUnknown, "code_typed", code)
			}
		}
		st.changed = st.changed || st.PromoCode != code
		st.PromoCode = code
	}
	if req.PromoCodes != nil {
		codes, err := checkCodes(*req.PromoCodes)
		if err != nil {
			return err
		}
		st.changed = st.changed || st.PromoCode != codes
		st.PromoCode = codes
	}
	if req.Metadata != nil {
		if err := checkMetadata(req.Metadata); err != nil {
			return err
		}
		st.changed = st.changed || !maps.Equal(st.Metadata, req.Metadata)
		st.Metadata = req.Metadata
	}
	return nil
}

// reprice prices st into row from the catalog and the policy, takes or
// releases the stock it holds, and sets its status: ready for payment exactly
// when there are items, all held, a complete shippable address and a
// shipping option that is offered.
//
// A shipping option the caller sent that is not offered is an error; one
// chosen before (the row's last pricing found it among the options) that is
// no longer offered, because the address moved to another zone, is dropped
// for the cheapest with an info message.
//
// A pricing that changes nothing the buyer agreed to keeps the session's
// expiry and delivery window (see keepAgreed), and reprice answers
// unchanged; anything else is a real change, after which the session lives
// the TTL from now, within its lifetime.
func (c *Checkout) reprice(ctx context.Context, tx *gorm.DB, row *sessionRow, st state, now time.Time) (unchanged bool, err error) {
	return c.repriceHolding(ctx, tx, row, st, now, time.Time{})
}

// repriceHolding is reprice, in the claim of a session for payment when
// paying is set: the holds of a session that stays ready are then taken,
// or kept, as being paid until paying (catalog.HoldRequest.Paying), in the
// same statement that would otherwise move them to the session's expiry.
func (c *Checkout) repriceHolding(ctx context.Context, tx *gorm.DB, row *sessionRow, st state, now, paying time.Time) (unchanged bool, err error) {
	was := *row
	prev := row.Priced // the last pricing
	email := emailKey(st.Buyer)
	// The bounds on untrusted buyers (holdRoom) weigh only new holds of a
	// session with an address to ship to.
	items := c.catalog.ItemsToHold
	if st.Address == nil || !paying.IsZero() || row.Trusted {
		items = c.catalog.ItemsToPrice
	}
	seen, err := items(ctx, tx, []string{row.ID}, holdBuyer(row, email), st.itemIDs())
	if err != nil {
		return false, err
	}
	buyer, err := c.buyerSessions(ctx, tx, row, email, now, seen)
	if err != nil {
		return false, err
	}
	lines, problems, err := cartLines(st, buyer, seen)
	if err != nil {
		return false, err
	}
	if len(lines) == 0 {
		problems = append(problems, keyed(errorMessage(string(shop.Missing), "$.line_items", "Add at least one item."), KeyItemsMissing))
	}
	limited, release := buyer.check(lines)
	problems = append(problems, limited...)
	var shippable *Address
	if st.Address == nil {
		problems = append(problems, keyed(errorMessage(string(shop.Missing), "$.fulfillment_address", "Add the shipping address."), KeyAddressMissing))
	} else if p := addressProblems(c.policy, st.Address); len(p) > 0 {
		problems = append(problems, p...)
	} else {
		shippable = st.Address
	}
	in := pricingInput{Policy: c.policy, Lines: lines, Address: shippable, OptionID: st.OptionID, Now: now,
		OptionKept: !st.optionSent && st.OptionID == prev.KeptOption}
	if in.Promos, err = c.promoInputs(ctx, tx, st.PromoCode); err != nil {
		return false, err
	}
	pr := price(in)
	problems = append(problems, pr.Errors...)
	if shippable != nil && pr.OptionID == "" && len(pr.Errors) == 0 {
		problems = append(problems, keyed(errorMessage(string(shop.Missing), "$.fulfillment_option_id", "Choose a shipping option."), KeyOptionMissing))
	}
	kept := keptOption(&st, pr.OptionID, len(pr.Options) > 0, in.OptionKept)

	row.ExpiresAt = c.expiry(row, now)
	row.UpdatedAt = now
	row.Status = NotReady
	var why Message // why the items may not be held, when they are not (Content "" when they may)
	if len(problems) == 0 && paying.IsZero() {
		if why, err = c.holdRoom(ctx, tx, row, email, release, lines, seen); err != nil {
			return false, err
		}
	}
	switch {
	case len(problems) == 0 && why.Content == "":
		short, err := c.hold(ctx, tx, row, email, buyer, release, lines, seen, now, paying)
		if err != nil {
			return false, err
		}
		problems = append(problems, short...)
		if len(short) == 0 {
			row.Status, row.EverHeld = Ready, true
		}
	case seen.MineRows > 0: // whatever it held, it holds no more
		if err := c.catalog.Release(ctx, tx, row.ID); err != nil {
			return false, err
		}
	}
	if len(problems) == 0 && why.Content != "" {
		// Not a dead end: ready, with nothing reserved (addrlimits.go).
		row.Status = Ready
		pr.Messages = append([]Message{why}, pr.Messages...)
	}

	row.setState(st)
	row.Total = pr.Total
	row.Priced = snapshot{
		LineItems: pr.LineItems, Options: pr.Options, OptionID: pr.OptionID, Totals: pr.Totals,
		Messages: append(problems, pr.Messages...), Promo: pr.Promo, KeptOption: kept,
		Applied: pr.Applied, Rejected: pr.Rejected,
	}
	return c.keepAgreed(ctx, tx, &was, row, prev, st, now, paying.IsZero())
}
