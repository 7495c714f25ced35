package checkout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"shop"
	"shop/catalog"
	"shop/database"
	"shop/orders"
	"shop/payments"
)

// Charger is what completion needs of a payment provider: payments.Stripe
// and payments.Sandbox satisfy it. It is declared here, where it is used, so
// that tests of completion can stand a provider of their own at this seam.
type Charger interface {
	// Name is the provider's name ("stripe", "sandbox").
	Name() string
	// Mode is test or live.
	Mode() payments.Mode
	// Charge charges once per idempotency key, however often it is called.
	Charge(ctx context.Context, r payments.Request) (*payments.Result, error)
	// Lookup returns the outcome of the charge made with key; found is
	// false when the provider never received one.
	Lookup(ctx context.Context, key string) (res *payments.Result, found bool, err error)
}

// PaymentData is what the host's payment sheet hands over.
type PaymentData struct {
	Token          string   `json:"token"`
	Provider       string   `json:"provider"`
	BillingAddress *Address `json:"billing_address,omitempty"`
}

// CompleteRequest is a call of complete_checkout.
type CompleteRequest struct {
	SessionID string
	// Buyer, when given, completes or replaces the session's buyer.
	Buyer   *Buyer
	Payment PaymentData
	// Seen, when set, is the SeenToken of the payment page the payer paid
	// on: a session whose figures are no longer those is refused
	// (price_changed) and nothing is charged.
	Seen string
}

// attemptRow is a row of payment_attempts: written, with its idempotency
// key, before the provider is called.
type attemptRow struct {
	ID             string `gorm:"primaryKey"`
	SessionID      string
	Attempt        int
	IdempotencyKey string
	Provider       string
	Mode           string
	Token          string
	Amount         int64
	Currency       string
	Status         attemptStatus
	Reference      string
	DeclineCode    string
	Message        string
	// OrderID is the id of the order a success makes: the session's, sent
	// to the provider with the charge.
	OrderID string
	// CustomerID is the provider's customer whose saved card Token is,
	// charged off-session; "" for any other token.
	CustomerID string
	// PromoCode is the codes (joined by commas) whose uses this attempt took in its claim,
	// kept by its order or given back when it ends without one.
	PromoCode string
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (attemptRow) TableName() string { return "payment_attempts" }

func (a *attemptRow) request() payments.Request {
	return payments.Request{
		Amount: a.Amount, Currency: a.Currency, Token: a.Token, IdempotencyKey: a.IdempotencyKey,
		Customer:    a.CustomerID,
		Description: "Checkout " + a.SessionID,
		Metadata:    a.metadata(),
	}
}

// metadata is what the provider keeps with the charge: the session, the
// order it makes (when the attempt knows it), the attempt and its key.
func (a *attemptRow) metadata() map[string]string {
	m := map[string]string{"checkout_session_id": a.SessionID, "payment_attempt_id": a.ID, "idempotency_key": a.IdempotencyKey}
	if a.OrderID != "" {
		m["order_id"] = a.OrderID
	}
	return m
}

// claimHold is how long a session being paid keeps its stock, whatever its
// TTL: until the payment is settled, by the caller or the reconciler.
const claimHold = 24 * time.Hour

// Complete pays for a ready session and turns it into an order, charging
// exactly once whatever the retries, concurrent calls, replicas or crashes
// (docs/architecture.md):
//  1. claim: the session goes from ready_for_payment to in_progress by a
//     conditional update on its version, after prices and stock are checked
//     again (a change answers price_changed or out_of_stock, not ready, and
//     charges nothing), and a use of its promotion is taken (a promotion
//     used up meanwhile answers invalid $.promo_code, not ready, and
//     charges nothing);
//  2. a payment attempt is written with its idempotency key and the id of
//     the order a success makes (the session's, chosen with it), both sent
//     to the provider;
//  3. the provider is charged with that key;
//  4. one transaction writes the order and its lines, takes the stock,
//     settles the attempt and completes the session.
//
// A completed session answers its order again and charges nothing. A decline
// leaves the session ready for payment, with the figures, delivery window and
// expiry it had, and a payment_declined or requires_3ds message. When the provider's answer is lost the session stays
// in_progress and the reconciler settles it.
//
// Errors: invalid or missing $.checkout_session_id, $.payment_data.token,
// $.payment_data.provider, $.buyer.email; not_found; expired; invalid for a
// session that is not ready for payment; price_changed when req.Seen is not
// the session's figures as they are now.
func (c *Checkout) Complete(ctx context.Context, req CompleteRequest) (*Session, error) {
	if err := c.checkPayment(req.Payment); err != nil {
		return nil, err
	}
	var att *attemptRow
	var claimed *sessionRow // the session as the claim saved it
	var answer *Session     // the answer when nothing is charged
	// errConflict: someone else changed or claimed the session; the next
	// try answers from the fresh state.
	err := retryConflicts(func() error {
		var err error
		att, claimed, answer, err = c.claimForCompletion(ctx, req)
		return err
	})
	switch {
	case errors.Is(err, errConflict):
		return nil, shop.Errorf(shop.Conflict, "$.checkout_session_id", "the session is being changed by another request right now; call complete_checkout again")
	case err != nil || att == nil:
		return answer, err
	}
	c.faultAt("before_charge")
	charge := att.request()
	res, err := c.charger.Charge(ctx, charge)
	if c.charged != nil {
		c.charged(charge, res, err)
	}
	c.faultAt("after_charge")
	return c.settle(ctx, att, claimed, res, err)
}

// claimForCompletion reads the session req pays and claims it with a new
// attempt, which it returns with the session's row as the claim saved it;
// or, when the session is not to be charged (completed, being paid, not
// ready, or its figures moved), the answer.
func (c *Checkout) claimForCompletion(ctx context.Context, req CompleteRequest) (*attemptRow, *sessionRow, *Session, error) {
	// The row this process wrote last goes on only into the claim, whose
	// transaction answers errConflict unless it is still the session's:
	// anything else is answered from the row as it is now.
	if row := c.known.get(req.SessionID); row != nil && req.Seen == "" && row.Status == Ready && c.now().Before(row.ExpiresAt) {
		if err := owned(ctx, row); err != nil {
			return nil, nil, nil, err
		}
		st := row.state()
		if mergeBuyer(&st, req.Buyer) == nil {
			// A refusal of the claim comes from the row unchecked: it
			// stands only while the session is at the kept version.
			id, version := row.ID, row.Version
			att, claimed, s, err := c.claimRow(ctx, req, row, st)
			return att, claimed, s, c.keptStill(ctx, id, version, err)
		}
	}
	row, err := c.load(ctx, req.SessionID)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := owned(ctx, row); err != nil {
		return nil, nil, nil, err
	}
	s, err := c.session(ctx, row)
	if err != nil {
		return nil, nil, nil, err
	}
	switch s.Status {
	case Completed:
		return nil, nil, s, nil
	case InProgress:
		return nil, nil, c.processing(s), nil
	case Ready:
	case NotReady:
		return nil, nil, nil, notReady(s)
	default:
		return nil, nil, nil, c.writable(row)
	}
	if req.Seen != "" && !c.validSeen(s, req.Seen) {
		// The claim below is conditional on the version read here, so
		// what is charged is what was compared.
		return nil, nil, nil, shop.Errorf(shop.PriceChanged, "$.checkout_session_id", "the order changed after the payment page was shown (now %s); nothing was charged: review it and pay again", c.policy.Currency().Format(row.Total))
	}
	st := row.state()
	if err := mergeBuyer(&st, req.Buyer); err != nil {
		return nil, nil, nil, err
	}
	return c.claimRow(ctx, req, row, st)
}

// claimRow claims the session of row, ready for payment, for st with a new
// attempt, as claimForCompletion does.
func (c *Checkout) claimRow(ctx context.Context, req CompleteRequest, row *sessionRow, st state) (*attemptRow, *sessionRow, *Session, error) {
	customer, err := c.savedCustomer(ctx, row, req.Payment.Token)
	if err != nil {
		return nil, nil, nil, err
	}
	c.faultAt("claim")
	att, err := c.claim(ctx, row, st, true, func(tx *gorm.DB, prior int64) (*attemptRow, error) {
		return c.newAttempt(ctx, tx, row, prior, c.charger.Name(), req.Payment.Token, "", customer)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	c.known.keep(row)
	if att != nil {
		return att, row, nil, nil
	}
	s, err := c.session(ctx, row) // prices or stock moved: not ready, nothing charged
	return nil, nil, s, err
}

func (c *Checkout) faultAt(point string) {
	if c.fault != nil {
		c.fault(point)
	}
}

// checkPayment refuses payment data this shop cannot take.
func (c *Checkout) checkPayment(p PaymentData) error {
	switch {
	case p.Provider == "":
		return shop.Errorf(shop.Missing, "$.payment_data.provider", `send the provider of the payment token: "stripe"`)
	case !strings.EqualFold(p.Provider, "stripe"):
		return shop.Errorf(shop.Invalid, "$.payment_data.provider", `this shop takes payments through "stripe", not %q`, p.Provider)
	case p.Token == "":
		return shop.Errorf(shop.Missing, "$.payment_data.token", "send the payment token the payment sheet returned")
	case len(p.Token) > 500:
		return shop.Errorf(shop.Invalid, "$.payment_data.token", "not a payment token: at most 500 characters")
	case c.charger.Mode() == payments.ModeLive && strings.HasPrefix(p.Token, "pm_card_"):
		return shop.Errorf(shop.Invalid, "$.payment_data.token", "%s is a Stripe test payment method; this shop takes live payments", p.Token)
	}
	return nil
}

// mergeBuyer completes the session's buyer with the one complete_checkout
// sent: what it leaves out (the email, the phone, the name as name or as
// first_name/last_name) stays as the session had it.
func mergeBuyer(st *state, b *Buyer) error {
	if b != nil {
		merged := *b
		if st.Buyer != nil {
			if merged.Email == "" {
				merged.Email = st.Buyer.Email
			}
			if merged.PhoneNumber == "" {
				merged.PhoneNumber = st.Buyer.PhoneNumber
			}
			if strings.TrimSpace(merged.Name+merged.FirstName+merged.LastName) == "" {
				merged.Name, merged.FirstName, merged.LastName = st.Buyer.Name, st.Buyer.FirstName, st.Buyer.LastName
			}
		}
		if err := checkBuyer(&merged); err != nil {
			return err
		}
		st.Buyer = &merged
	}
	if st.Buyer == nil || st.Buyer.Email == "" {
		return shop.Errorf(shop.Missing, "$.buyer.email", "the order needs the buyer's email, for the receipt; send buyer.email")
	}
	return nil
}

// claim checks prices and stock again and, when nothing moved, marks the
// session in_progress over the version it was read at and writes its
// payment attempt (attempt), in one transaction, committed before the
// provider is called: a claimed session always has its attempt, for the
// reconciler to settle. The session's promotion, when it applies, has a use
// taken in the same transaction (see promo.go), and the session its order
// id. When the pricing finds nothing changed, the session keeps what the
// buyer agreed to (its lines, totals, option and delivery window, and its
// expiry: see agreed.go), and so does the order it becomes. claim answers
// nil, with the session saved not ready and why, when something moved, the
// promotion's usage limit included. A card payment of complete_checkout
// (card) must be within the caps of paycaps.go, which count the session's
// attempts so far too: attempt is given their number, -1 when not counted.
func (c *Checkout) claim(ctx context.Context, row *sessionRow, st state, card bool, attempt func(tx *gorm.DB, prior int64) (*attemptRow, error)) (*attemptRow, error) {
	before := row.Priced
	promos := c.knownPromos(st.PromoCode)
	var att *attemptRow
	read := *row
	err := c.transact(ctx, func(tx *gorm.DB) error {
		// A transaction run again starts from the row as read. What was
		// checked of it (its status, its buyer, the figures the payer
		// saw) holds for the session at that version: the save below is
		// over it, and errConflict when the session moved.
		att, *row = nil, read
		now := database.Now(tx)
		for _, p := range promos { // in the order of their codes, so that no two claims wait on each other
			if err := c.lockPromo(ctx, tx, p.Code); err != nil {
				return err
			}
		}
		prior := int64(-1)
		if card {
			var err error
			if prior, err = c.paymentCaps(ctx, tx, row, now); err != nil {
				return err
			}
		}
		// Priced with its stock held as being paid, for the claim; a
		// session not claimed below (its figures moved) loses its holds.
		if _, err := c.repriceHolding(ctx, tx, row, st, now, now.Add(claimHold)); err != nil {
			return err
		}
		after := row.Priced
		if row.Status == Ready {
			moved := priceChanges(before, row)
			for _, code := range lostCodes(before.Promo, after.Promo) {
				promo, _ := c.policy.Promotion(code)
				usedUp, err := c.promoUsedUp(ctx, tx, promo)
				if err != nil {
					return err
				}
				if usedUp {
					// The promotion ran out since the buyer saw the
					// figures: that is what moved the total.
					moved = slices.DeleteFunc(moved, func(m Message) bool { return m.Param == "$.totals" })
					moved = append([]Message{usedUpMessage(code)}, moved...)
				}
			}
			if len(moved) > 0 {
				if err := c.catalog.Release(ctx, tx, row.ID); err != nil {
					return err
				}
				row.Status = NotReady
				row.addMessages(moved...)
			}
		}
		claimed := row.Status == Ready
		if claimed {
			if err := c.takePromos(ctx, tx, after.Promo); err != nil {
				return err
			}
			if row.OrderID == "" {
				row.OrderID = orders.NewID() // a session made before order ids were chosen with it
			}
			row.Status = InProgress
		}
		noteLocale(ctx, row)
		if err := c.save(tx, row); err != nil || !claimed {
			return err
		}
		var err error
		att, err = attempt(tx, prior)
		return err
	})
	if errors.Is(err, errConflict) {
		c.known.forget(read.ID) // the next try reads the row as it is
	}
	if err != nil {
		return nil, err
	}
	return att, nil
}

// priceChanges compares the figures the buyer saw with the session priced
// again, and returns a price_changed message per line and for the total.
func priceChanges(before snapshot, row *sessionRow) []Message {
	var out []Message
	for i, l := range row.Priced.LineItems {
		if i < len(before.LineItems) && before.LineItems[i].UnitAmount != l.UnitAmount {
			out = append(out, keyed(errorMessage(string(shop.PriceChanged), fmt.Sprintf("$.line_items[%d].unit_amount", i),
				fmt.Sprintf("The price of %s changed; review the new total and pay again.", l.Name)), KeyPriceChanged, "name", l.Name))
		}
	}
	var was int64
	for _, t := range before.Totals {
		if t.Type == TotalTotal {
			was = t.Amount
		}
	}
	if was != row.Total {
		out = append(out, keyed(errorMessage(string(shop.PriceChanged), "$.totals",
			"The total changed since the session was priced; review it and pay again."), KeyTotalChanged))
	}
	return out
}

// newAttempt writes, in the claim's transaction, a payment attempt of a
// session: its idempotency key is derived from the session and the
// attempt's number (unless key is given), so every try of this attempt
// charges at most once. It carries the session's order id, the same for
// every attempt of the session, and the promotion whose use the claim took
// (the one the session is priced with). prior is the number of the
// session's attempts so far, counted in the same transaction, or -1 for
// newAttempt to count them: every attempt saves the session over its
// version in its transaction too, so none is written after the count by a
// transaction that does not make this one's save fail.
func (c *Checkout) newAttempt(ctx context.Context, tx *gorm.DB, row *sessionRow, prior int64, provider, token, key, customer string) (*attemptRow, error) {
	n := prior
	if n < 0 {
		if err := database.QueryRow(tx, "SELECT COUNT(*) FROM payment_attempts WHERE session_id = ?", row.ID).Scan(&n); err != nil {
			return nil, fmt.Errorf("count payment attempts: %w", err)
		}
	}
	if key == "" {
		key = fmt.Sprintf("shop_%s_attempt_%d", row.ID, n+1)
	}
	now := database.Now(tx)
	att := &attemptRow{
		ID:             fmt.Sprintf("pa_%s_%d", strings.TrimPrefix(row.ID, "cs_"), n+1),
		SessionID:      row.ID,
		Attempt:        int(n + 1),
		IdempotencyKey: key,
		Provider:       provider,
		Mode:           string(c.charger.Mode()),
		Token:          token,
		Amount:         row.Total,
		Currency:       row.Currency,
		OrderID:        row.OrderID,
		CustomerID:     customer,
		PromoCode:      row.Priced.Promo,
		Status:         attemptPending,
		CreatedAt:      now,
		UpdatedAt:      now,
	}
	_, err := database.Insert(tx, "payment_attempts", attemptColumns, []any{att.ID, att.SessionID, att.Attempt, att.IdempotencyKey,
		att.Provider, att.Mode, att.Token, att.Amount, att.Currency, att.Status, att.Reference, att.DeclineCode, att.Message,
		att.OrderID, att.CustomerID, att.PromoCode, att.CreatedAt, att.UpdatedAt})
	if err != nil {
		return nil, fmt.Errorf("write payment attempt: %w", err)
	}
	return att, nil
}

// attemptColumns are the columns newAttempt writes, in attemptRow's order.
var attemptColumns = []string{"id", "session_id", "attempt", "idempotency_key", "provider", "mode", "token", "amount",
	"currency", "status", "reference", "decline_code", "message", "order_id", "customer_id", "promo_code", "created_at", "updated_at"}

// processing is a session being paid, with a message that says to ask again.
func (c *Checkout) processing(s *Session) *Session {
	s.Messages = append(s.Messages, keyed(infoMessage("", "",
		"The payment is being processed. Call get_checkout_session (or complete_checkout again) in a few seconds for the outcome; nothing will be charged twice."),
		KeyPaymentProcessing))
	return s
}

// notReady refuses to take payment for a session that is not ready for it,
// saying what to fix.
func notReady(s *Session) error {
	why, ok := s.FirstProblem()
	if !ok {
		why = "it has no problems listed."
	}
	return shop.Errorf(shop.Invalid, "$.checkout_session_id", "this session is not ready for payment: %s Fix it with update_checkout_session first.", why)
}

// lines are a session's lines as stock to hold or take.
func lines(items []Item) []catalog.HoldLine {
	out := make([]catalog.HoldLine, len(items))
	for i, it := range items {
		out[i] = catalog.HoldLine{VariantID: it.ID, Quantity: it.Quantity}
	}
	return out
}
