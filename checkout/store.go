package checkout

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"shop/orders"
)

// sessionRow is a row of checkout_sessions. The buyer's input (items, buyer,
// address, option, promotion code, metadata) is kept as sent; Priced is the
// session as last priced from the catalog and the policy.
type sessionRow struct {
	ID        string `gorm:"primaryKey"`
	Status    Status
	Version   int64
	Currency  string
	Items     string
	Buyer     string
	Address   string
	OptionID  string
	PromoCode string
	Metadata  string
	Priced    string
	Total     int64
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
}

func (sessionRow) TableName() string { return "checkout_sessions" }

// state is what the buyer asked for, decoded from a row.
type state struct {
	Items     []Item
	Buyer     *Buyer
	Address   *Address
	OptionID  string
	PromoCode string
	Metadata  map[string]string

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
	// Promo is the code of the promotion the figures apply, "" for none.
	Promo string `json:"promo,omitempty"`
	// KeptOption is the option the buyer chose that was last found among
	// the options (kept while there are no options, without an address):
	// if it vanishes later, because the address moved to another zone, the
	// cheapest replaces it instead of an error.
	KeptOption string `json:"kept_option,omitempty"`
}

func (r *sessionRow) state() (state, error) {
	st := state{OptionID: r.OptionID, PromoCode: r.PromoCode}
	if err := unmarshalIf(r.Items, &st.Items); err != nil {
		return st, fmt.Errorf("session %s items: %w", r.ID, err)
	}
	if err := unmarshalIf(r.Buyer, &st.Buyer); err != nil {
		return st, fmt.Errorf("session %s buyer: %w", r.ID, err)
	}
	if err := unmarshalIf(r.Address, &st.Address); err != nil {
		return st, fmt.Errorf("session %s address: %w", r.ID, err)
	}
	if err := unmarshalIf(r.Metadata, &st.Metadata); err != nil {
		return st, fmt.Errorf("session %s metadata: %w", r.ID, err)
	}
	return st, nil
}

// setState writes st into the row's input columns.
func (r *sessionRow) setState(st state) {
	r.Items = marshal(st.Items)
	r.Buyer, r.Address, r.Metadata = "", "", ""
	r.BuyerEmail = emailKey(st.Buyer)
	if st.Buyer != nil {
		r.Buyer = marshal(st.Buyer)
	}
	if st.Address != nil {
		r.Address = marshal(st.Address)
	}
	if len(st.Metadata) > 0 {
		r.Metadata = marshal(st.Metadata)
	}
	r.OptionID, r.PromoCode = st.OptionID, st.PromoCode
}

// session is the row as the contract shows it. A session past its expiry
// that the sweeper has not reached yet is shown expired.
func (c *Checkout) session(ctx context.Context, r *sessionRow) (*Session, error) {
	return c.sessionWith(ctx, r, nil)
}

// sessionWith is session with the order of a completed session when the
// caller holds it already (it has just written it).
func (c *Checkout) sessionWith(ctx context.Context, r *sessionRow, order *orders.Order) (*Session, error) {
	st, err := r.state()
	if err != nil {
		return nil, err
	}
	var snap snapshot
	if err := json.Unmarshal([]byte(r.Priced), &snap); err != nil {
		return nil, fmt.Errorf("session %s priced: %w", r.ID, err)
	}
	s := &Session{
		ID: r.ID, Status: r.Status, Currency: r.Currency,
		PaymentMode: c.policy.PaymentMode,
		PaymentProvider: PaymentProvider{
			Provider: "stripe", MerchantID: c.policy.MerchantID, SupportedPaymentMethods: []string{"card"},
		},
		Buyer: st.Buyer, FulfillmentAddress: st.Address,
		LineItems: snap.LineItems, FulfillmentOptions: snap.Options, FulfillmentOptionID: snap.OptionID,
		Totals: snap.Totals, Messages: snap.Messages, Links: c.links(),
		ExpiresAt: r.ExpiresAt.UTC(), Metadata: st.Metadata, ExternalCheckout: c.policy.ExternalCheckout,
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
		s.Messages = []Message{errorMessage("expired", "", "This checkout session expired and its items were released; start a new one.")}
	case Canceled:
		s.Messages = []Message{{Type: MessageInfo, ContentType: "plain", Content: "Checkout session has been canceled."}}
	}
	nonNil(s)
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

// newSessionID returns "cs_" and 160 random bits in lower-case base32.
func newSessionID() string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "cs_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs, slices and maps of strings reach here
	}
	return string(b)
}

func unmarshalIf(s string, v any) error {
	if s == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}
