package checkout

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"
	"gorm.io/gorm"

	"shop"
	"shop/contract"
	"shop/database"
)

// sessionRow is a row of checkout_sessions. The buyer's input (items, buyer,
// address, option, promotion code, metadata) is kept as sent; Priced is the
// session as last priced from the catalog and the policy. The structured
// columns are TEXT holding JSON, written and read by gorm's JSON serializer
// (an absent value is stored as ”): nothing decodes them by hand.
type sessionRow struct {
	ID        string `gorm:"primaryKey"`
	Status    Status
	Version   int64
	Currency  string
	Items     []Item   `gorm:"serializer:json;not null"`
	Buyer     *Buyer   `gorm:"serializer:json;not null"`
	Address   *Address `gorm:"serializer:json;not null"`
	OptionID  string
	PromoCode string
	Metadata  map[string]string `gorm:"serializer:json;not null"`
	// SaveAddress is a linked buyer's save_address, nil for a guest's.
	SaveAddress *bool
	// Locale is the buyer's language, the last one a call on the session
	// carried (shop.LocaleFrom), "" while none did: its order's emails are
	// written in it.
	Locale string
	Priced snapshot `gorm:"serializer:json"`
	Total  int64
	// OrderID is the id the session's order will have, chosen with the
	// session (or, for a session made before there were such ids, when it
	// is first paid): the payment provider receives it with the charge.
	OrderID   string
	ExpiresAt time.Time
	CreatedAt time.Time
	// UpdatedAt is the session's last real change (see agreed.go) or its end
	// (which the retention sweep counts from), by the checkout's clock:
	// written as set, never by gorm's own.
	UpdatedAt time.Time `gorm:"autoUpdateTime:false"`

	// BuyerKey is who created the session (shop.Buyer.Key), "" when
	// nobody was known; it never changes. BuyerEmail is the buyer's email
	// in lower case, "" without one. See holdlimits.go.
	BuyerKey   string
	BuyerEmail string
	// BuyerAddress is the client address of the call that created the
	// session (shop.Buyer.Address), "" over stdio; it never changes.
	// EverHeld is true once the session held stock (addrlimits.go,
	// retention.go).
	BuyerAddress string
	// BuyerNetwork is the IPv6 /48 of BuyerAddress (shop.NetworkOf), ""
	// for an IPv4 address or none: the second tier of the per-address
	// bounds (addrlimits.go). It never changes.
	BuyerNetwork string
	EverHeld     bool
	// Trusted is true when the buyer is a linked account that had a paid
	// order when the session was created: counted by account alone, not
	// in its address's aggregate nor the unverified share (addrlimits.go).
	// It never changes.
	Trusted bool
	// Channel is the endpoint the session was created through
	// (shop.ChannelFrom of Create's ctx); its order keeps it.
	Channel string

	// was is the indexed columns as the database holds them at Version
	// (known: read, inserted or saved), for save to leave out those that
	// did not change and Options.SessionMoved to tell where the row came
	// from.
	was   indexed
	known bool
}

func (sessionRow) TableName() string { return "checkout_sessions" }

// AfterFind keeps the indexed columns the row was read with.
func (r *sessionRow) AfterFind(*gorm.DB) error {
	r.stored()
	return nil
}

// noteMove tells Options.SessionMoved, once tx commits, that n sessions
// went from one status to another (from "" is a new session).
func (c *Checkout) noteMove(tx *gorm.DB, from, to Status, n int64) {
	if c.moved == nil || from == to || n == 0 {
		return
	}
	if from == "" {
		from = "new"
	}
	database.AfterCommit(tx, func() { c.moved(string(from), string(to), n) })
}

// statusIn is the condition that a session's status is one of ss, with the
// statuses written out as literals: a partial index of checkout_sessions
// (migration 00021) serves a query only when the query names the index's
// statuses as the index does, in the same order; neither SQLite nor a
// generic PostgreSQL plan matches a bound parameter against them.
func statusIn(ss ...Status) string {
	if len(ss) == 1 {
		return "status = '" + string(ss[0]) + "'"
	}
	quoted := make([]string, len(ss))
	for i, s := range ss {
		quoted[i] = "'" + string(s) + "'"
	}
	return "status IN (" + strings.Join(quoted, ", ") + ")"
}

// state is what the buyer asked for, decoded from a row.
type state struct {
	Items     []Item
	Buyer     *Buyer
	Address   *Address
	OptionID  string
	PromoCode string
	Metadata  map[string]string
	// SaveAddress is whether completing saves the address to the linked
	// buyer's account; nil for a guest.
	SaveAddress *bool

	// optionSent is true when the request being applied sent OptionID: an
	// option that is not offered is then an error, never replaced.
	optionSent bool
	// changed is true when the request being applied changed a value the
	// session had (apply sets it): a real change, after which the session
	// lives the TTL from now (see agreed.go).
	changed bool
}

// snapshot is a session as priced: what Priced holds.
type snapshot struct {
	LineItems []LineItem          `json:"line_items"`
	Options   []FulfillmentOption `json:"fulfillment_options"`
	OptionID  string              `json:"fulfillment_option_id,omitempty"`
	Totals    []Total             `json:"totals"`
	Messages  []Message           `json:"messages"`
	// Promo is the codes of the promotions the figures apply, joined by
	// commas, "" for none.
	Promo string `json:"promo,omitempty"`
	// Applied and Rejected say what became of each code (discounts.go).
	Applied  []AppliedDiscount  `json:"applied,omitempty"`
	Rejected []RejectedDiscount `json:"rejected,omitempty"`
	// KeptOption is the option the buyer chose that was last found among
	// the options (kept while there are no options, without an address):
	// if it vanishes later, because the address moved to another zone, the
	// cheapest replaces it instead of an error.
	KeptOption string `json:"kept_option,omitempty"`
}

// clone is a copy of s whose slices are its own: changing an element of
// one leaves the other as it is.
func (s snapshot) clone() snapshot {
	s.LineItems, s.Options = slices.Clone(s.LineItems), slices.Clone(s.Options)
	s.Totals, s.Messages = slices.Clone(s.Totals), slices.Clone(s.Messages)
	s.Applied, s.Rejected = slices.Clone(s.Applied), slices.Clone(s.Rejected)
	return s
}

// state is the buyer's input the row keeps.
func (r *sessionRow) state() state {
	return state{Items: r.Items, Buyer: r.Buyer, Address: r.Address, OptionID: r.OptionID, PromoCode: r.PromoCode, Metadata: r.Metadata,
		SaveAddress: r.SaveAddress}
}

// setState writes st into the row's input columns.
func (r *sessionRow) setState(st state) {
	r.Items, r.Buyer, r.Address = st.Items, st.Buyer, st.Address
	r.Metadata = st.Metadata
	if len(st.Metadata) == 0 {
		r.Metadata = nil
	}
	r.BuyerEmail = emailKey(st.Buyer)
	r.OptionID, r.PromoCode, r.SaveAddress = st.OptionID, st.PromoCode, st.SaveAddress
}

// addMessages adds messages to the front of the row's priced messages.
func (r *sessionRow) addMessages(msgs ...Message) {
	r.Priced.Messages = slices.Concat(msgs, r.Priced.Messages)
}

// session is the row as the contract shows it. A session past its expiry
// that the sweeper has not reached yet is shown expired.
func (c *Checkout) session(ctx context.Context, r *sessionRow) (*Session, error) {
	return c.sessionWith(ctx, r, nil)
}

// sessionWith is session with the order of a completed session when the
// caller holds it already (it has just written it).
func (c *Checkout) sessionWith(ctx context.Context, r *sessionRow, order *contract.Order) (*Session, error) {
	st, snap := r.state(), r.Priced.clone() // the answer's slices are its own
	s := &Session{
		ID: r.ID, Status: r.Status, Currency: r.Currency,
		PaymentMode: c.policy.PaymentMode, PaymentProvider: c.paymentProvider(),
		Buyer: st.Buyer, FulfillmentAddress: st.Address,
		LineItems: snap.LineItems, FulfillmentOptions: snap.Options, FulfillmentOptionID: snap.OptionID,
		Totals: snap.Totals, Messages: snap.Messages, Links: c.links(),
		ExpiresAt: r.ExpiresAt.UTC(), Metadata: st.Metadata, ExternalCheckout: c.policy.ExternalCheckout,
		PaymentSheet: c.policy.SheetEnabled(), Display: c.policy.displayFor(st.Address), SaveAddress: st.SaveAddress,
		Discounts:         discountsOf(st.PromoCode, snap.Applied, snap.Rejected),
		ShippingCountries: c.policy.ShippingCountries(),
	}
	if s.Status == Ready || s.Status == NotReady {
		if !c.now().Before(r.ExpiresAt) {
			s.Status = Expired
		}
	}
	switch s.Status {
	case Completed:
		if order == nil {
			var err error
			if order, err = c.orders.BySession(ctx, nil, r.ID); err != nil {
				return nil, err
			}
		}
		s.Order = order
	case Expired:
		s.Messages = []Message{keyed(errorMessage("expired", "", "This checkout session expired and its items were released; start a new one."), KeySessionExpired)}
	case Canceled:
		s.Messages = []Message{keyed(infoMessage("", "", "Checkout session has been canceled."), KeySessionCanceled)}
	}
	nonNil(s)
	if s.Status == Ready || s.Status == NotReady {
		managed, err := c.managedMethods(ctx, r)
		if err != nil {
			return nil, err
		}
		s.PaymentProvider.ManagedPaymentMethods = managed
	}
	return s, nil
}

// nonNil makes the arrays the contract always lists arrays, never null.
func nonNil(s *Session) {
	if s.LineItems == nil {
		s.LineItems = []LineItem{}
	}
	if s.FulfillmentOptions == nil {
		s.FulfillmentOptions = []FulfillmentOption{}
	}
	if s.Totals == nil {
		s.Totals = []Total{}
	}
	if s.Messages == nil {
		s.Messages = []Message{}
	}
	for i := range s.LineItems {
		if s.LineItems[i].Images == nil {
			s.LineItems[i].Images = []string{}
		}
	}
}

func errorMessage(code, param, content string) Message {
	return Message{Type: MessageError, Code: code, Param: param, ContentType: "plain", Content: content}
}

// newSessionID returns "cs_" and a new id (shop.NewID: its time, 130 random bits).
func newSessionID() string { return shop.NewID("cs_") }

// marshal encodes a JSON column. The session's JSON columns are encoded at
// every save and decoded at every read (readRow), by segmentio/encoding,
// the JSON package go-sdk decodes with: the bytes encoding/json writes and
// reads, in about half its time and with fewer allocations.
func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs, slices and maps of strings reach here
	}
	return string(b)
}

// transact runs fn in one transaction, by the checkout's clock
// (database.Transact: database.Now(tx) is the transaction's time, and a
// serialization failure runs fn again on a fresh transaction).
func (c *Checkout) transact(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return database.Transact(database.WithClock(ctx, c.now), c.db, fn)
}

// retryConflicts runs try again while it loses a race on a session's
// version (errConflict), at most conflictRetries times in all; it returns
// errConflict when every try lost. It is the one place where a lost race
// starts again, each try reading the session afresh.
func retryConflicts(try func() error) error {
	for range conflictRetries {
		if err := try(); !errors.Is(err, errConflict) {
			return err
		}
	}
	return errConflict
}
