package checkout

import (
	"context"
	"fmt"
	"strings"
	"time"

	"shop"
)

// Tools returns the buyer tools over checkout sessions.
func (c *Checkout) Tools() []shop.Tool {
	errs := " Answers the whole CheckoutSession: status ready_for_payment when it can be paid, otherwise not_ready_for_payment " +
		"with an error message per problem (code missing, invalid or out_of_stock; param the JSONPath of the field to fix). " +
		"Amounts are integers in minor units. Refused (isError) when the input itself is wrong: the text names the field." +
		" When it is ready_for_payment, show it with render_checkout where the host shows widgets; where no widget is shown, " +
		"call create_payment_link and give the buyer its url to pay."
	widget := map[string]any{"openai/widgetAccessible": true}
	// Tools that do more for a linked buyer: a new session starts with the
	// account's email and default address; a session offers, and is paid
	// with, the account's saved cards.
	prefills := shop.AuthRequirement{Scopes: []string{shop.ScopeAccount}, Optional: true}
	savedCards := shop.AuthRequirement{Scopes: []string{shop.ScopePayments}, Optional: true}
	return []shop.Tool{
		shop.NewTool(shop.Tool{
			Name:  "create_checkout_session",
			Title: "Create a checkout session",
			Auth:  prefills,
			Description: "Start a checkout for variants of the catalog (ids from get_product) with quantities; optionally the buyer, " +
				"the shipping address, a shipping option and a promotion code. Prices, shipping and tax come from the shop. " +
				"The session holds the stock while it is ready for payment, until expires_at." + errs,
			Meta: widget,
		}, func(ctx context.Context, args CreateArgs) (*Session, string, error) {
			return c.in(ctx).result(c.Create(ctx, args.request()))
		}),
		shop.NewTool(shop.Tool{
			Name:  "update_checkout_session",
			Title: "Update a checkout session",
			Auth:  savedCards,
			Description: "Change a checkout session: items (replaces the cart), buyer, fulfillment_address, fulfillment_option_id " +
				"(one of the session's fulfillment_options; another id is an invalid message, \"\" lets the shop choose), promo_code (\"\" removes it), metadata. Fields not sent stay as they are." + errs,
			// The same update again changes nothing (and does not move expires_at).
			Idempotent: true,
			Meta:       widget,
		}, func(ctx context.Context, args UpdateArgs) (*Session, string, error) {
			return c.in(ctx).result(c.Update(ctx, args.CheckoutSessionID, args.request()))
		}),
		shop.NewTool(shop.Tool{
			Name:  "complete_checkout",
			Title: "Complete a checkout",
			Auth:  savedCards,
			Description: "Pay for a session that is ready_for_payment with the token the host's payment sheet returned " +
				"(payment_data.provider \"stripe\"; in test mode Stripe test payment methods such as pm_card_visa). " +
				"Charges exactly once however often it is called: a completed session answers its order again. " +
				"A declined card leaves the session ready_for_payment with a payment_declined or requires_3ds message (not an error), " +
				"so the buyer can try another card. A change of price or stock answers price_changed or out_of_stock, and a promotion code used up " +
				"meanwhile an invalid $.promo_code message, with the session not ready; nothing is charged then.",
			// A replay answers the same order and charges nothing.
			Idempotent: true,
			Meta:       widget,
		}, c.completeTool),
		shop.NewTool(shop.Tool{
			Name:  "create_payment_link",
			Title: "Create a payment link",
			Description: "Make a page where the buyer pays for a session that is ready_for_payment, for hosts without a payment sheet: " +
				"answers {url, expires_at, provider}. Open the url for the buyer (or give it to them); when they have paid, " +
				"get_checkout_session shows the session completed with its order. The session needs the buyer's email. " +
				"Each call makes a new page; the session is paid at most once, and a second payment is refunded.",
			Meta: widget,
		}, c.linkTool),
		shop.NewTool(shop.Tool{
			Name:        "get_checkout_session",
			Title:       "Get a checkout session",
			Auth:        savedCards,
			Description: "Get a checkout session as it stands: items, totals, shipping options, messages, status.",
			ReadOnly:    true,
			Idempotent:  true,
			Meta:        widget,
		}, c.byID(c.Get)),
		shop.NewTool(shop.Tool{
			Name:        "cancel_checkout_session",
			Title:       "Cancel a checkout session",
			Description: "Cancel a checkout session the buyer no longer wants; the stock it held is released. A completed session cannot be canceled.",
			Destructive: true,
			Idempotent:  true,
		}, c.byID(c.Cancel)),
	}
}

// completeTool pays for a session; a buyer's phone may come as phone.
func (c *Checkout) completeTool(ctx context.Context, args CompleteArgs) (*Session, string, error) {
	if args.PaymentData == nil {
		return nil, "", shop.Errorf(shop.Missing, "$.payment_data", `send payment_data: {"token": "…", "provider": "stripe"}`)
	}
	req := CompleteRequest{SessionID: args.CheckoutSessionID, Payment: *args.PaymentData}
	if args.Buyer != nil {
		b := args.Buyer.Buyer
		if b.PhoneNumber == "" {
			b.PhoneNumber = args.Buyer.Phone
		}
		req.Buyer = &b
	}
	return c.in(ctx).result(c.Complete(ctx, req))
}

func (c *Checkout) linkTool(ctx context.Context, args SessionArgs) (*PaymentLink, string, error) {
	link, err := c.CreateLink(ctx, args.CheckoutSessionID)
	if err != nil {
		return nil, "", err
	}
	text := fmt.Sprintf("Payment page for checkout session %s (%s), open until %s: %s",
		args.CheckoutSessionID, link.Provider, link.ExpiresAt.Format(time.RFC3339), link.URL)
	return link, text, nil
}

// byID makes a tool's handler of a method that takes only a session id.
func (c *Checkout) byID(method func(context.Context, string) (*Session, error)) func(context.Context, SessionArgs) (*Session, string, error) {
	return func(ctx context.Context, args SessionArgs) (*Session, string, error) {
		return c.in(ctx).result(method(ctx, args.CheckoutSessionID))
	}
}

// texts writes tool texts in the buyer's locale (shop.LocaleFrom).
type texts struct {
	c      *Checkout
	locale string
}

// in is the checkout's texts for the call of ctx.
func (c *Checkout) in(ctx context.Context) texts { return texts{c, shop.LocaleFrom(ctx)} }

// result is a tool's answer of a session: the session and its summary.
func (t texts) result(s *Session, err error) (*Session, string, error) {
	if err != nil {
		return nil, "", err
	}
	return s, t.c.summary(s, t.locale), nil
}

// summary is the short text of a session for hosts without UI, its
// amounts in the buyer's locale and as the session displays them: with
// tax included, lines and shipping with tax and the tax "incl."; without,
// the tax its own figure.
func (c *Checkout) summary(s *Session, locale string) string {
	cur := c.policy.Currency()
	format := func(a int64) string { return cur.FormatIn(locale, a) }
	d := s.Display
	var sb strings.Builder
	fmt.Fprintf(&sb, "Checkout session %s: %s.", s.ID, strings.ReplaceAll(string(s.Status), "_", " "))
	for _, l := range s.LineItems {
		fmt.Fprintf(&sb, "\n- %d × %s: %s", l.Item.Quantity, l.Name, format(d.Line(l)))
	}
	if len(s.LineItems) > 0 && len(s.Totals) > 0 {
		var rows []string
		for _, r := range d.Rows(s.LineItems, s.Totals) {
			rows = append(rows, d.EnglishLabel(r.Type)+" "+format(r.Amount))
		}
		fmt.Fprintf(&sb, "\n%s.", strings.Join(rows, ", "))
	}
	for _, m := range s.Messages {
		if m.Type == MessageError {
			fmt.Fprintf(&sb, "\nTo fix (%s): %s", m.Param, m.Content)
		}
	}
	if s.Status == Ready {
		sb.WriteString("\nReady for payment. Where no widget is shown, call create_payment_link and give the buyer its url.")
	}
	if s.Order != nil {
		fmt.Fprintf(&sb, "\nOrder %d placed (%s); receipt: %s", s.Order.Number, s.Order.ID, s.Order.PermalinkURL)
	}
	return sb.String()
}
