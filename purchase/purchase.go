// Package purchase is `shop purchase`: a whole test-mode purchase against a
// running shop, made as a host makes it (CONTRACT.md §3–§5), over streamable
// HTTP with go-sdk's client, checking every answer and figure on the way. It
// is an MCP client and nothing more: it knows the shop only by what the shop
// answers, and imports none of its packages. Its checks are in check.go,
// its steps in steps.go, paying on the payment page in link.go, its payment
// tokens and Stripe requests in pay.go, its command line (Command) in
// command.go.
package purchase

import (
	"shop/contract"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/money"
)

// Defaults and bounds of a run.
const (
	DefaultURL     = "http://127.0.0.1:8000/mcp"
	DefaultTimeout = 60 * time.Second
	// MaxItems bounds Options.Items: one search page is enough to find them.
	MaxItems = 20
	// DefaultStripeAPI is Stripe's API.
	DefaultStripeAPI = "https://api.stripe.com"
)

// The buyer and address of a purchase run: an address in California, which
// the demo policy ships to (zone us) and taxes.
var (
	purchaseBuyer = contract.Buyer{Name: "Purchase Check", Email: "purchase-check@example.com"}
	// DefaultAddress is where a run ships when Options.Address is empty.
	DefaultAddress = Address{
		Name: "Purchase Check", LineOne: "1 Market St", City: "San Francisco",
		State: "CA", Country: "US", PostalCode: "94105",
	}
)

// ParseAddress reads --address: an Address of CONTRACT.md §4 in JSON, with
// at least the fields every shop needs. Whether the shop ships there is for
// the run to find out.
func ParseAddress(s string) (Address, error) {
	var a Address
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, fmt.Errorf("send an address as JSON, such as %s: %w", mustAddressJSON(DefaultAddress), err)
	}
	for _, f := range []struct{ name, value string }{
		{"name", a.Name}, {"line_one", a.LineOne}, {"city", a.City}, {"country", a.Country}, {"postal_code", a.PostalCode},
	} {
		if strings.TrimSpace(f.value) == "" {
			return a, fmt.Errorf("the address has no %s: send one, as in %s", f.name, mustAddressJSON(DefaultAddress))
		}
	}
	return a, nil
}

func mustAddressJSON(a Address) string {
	b, err := json.Marshal(a)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// ErrFailed is a run in which some check did not hold; the report says
// which.
var ErrFailed = errors.New("purchase: a check failed (see the report)")

// Options are the flags of `shop purchase` and what it reads from the
// environment.
type Options struct {
	URL     string
	Items   int
	Promo   string
	Decline bool
	// Link pays as a buyer in a host without a payment sheet does: on the
	// page create_payment_link answers.
	Link    bool
	JSON    bool
	Live    bool
	Timeout time.Duration
	// Address is where the run ships to (--address; default DefaultAddress).
	Address Address
	// StripeKey is STRIPE_SECRET_KEY; a sk_test_ key pays with shared
	// payment tokens made by Stripe's test helpers.
	StripeKey string
	// StripeAPI is Stripe's address (default DefaultStripeAPI); tests point
	// it at a fake.
	StripeAPI string
	// SPTVersion is the Stripe-Version of the shared payment token helper:
	// the preview API version the shop charges the tokens with.
	SPTVersion string
	// Version is the client's version in its MCP initialize request.
	Version string
	// Account links the buyer's account first (account.go) and buys with
	// its access token; SMTPCapture is then where the run listens for the
	// shop's emails, to read the sign-in code.
	Account     bool
	SMTPCapture string
	// Return has the run return the whole order after buying it, with
	// staff shipping and accepting it at /admin/mcp with AdminToken (an
	// owner's; SHOP_ADMIN_TOKEN in the environment): returns.go.
	Return     bool
	AdminToken string
}

// Validate checks the options a command line gave, saying what to send
// instead.
func (o Options) Validate() error {
	switch {
	case o.Items < 1 || o.Items > MaxItems:
		return fmt.Errorf("--items %d: send 1 to %d", o.Items, MaxItems)
	case o.Timeout <= 0:
		return fmt.Errorf("--timeout %s: send a positive duration such as 60s", o.Timeout)
	case !strings.HasPrefix(o.URL, "http://") && !strings.HasPrefix(o.URL, "https://"):
		return fmt.Errorf("--url %q: send the shop's MCP endpoint, such as %s", o.URL, DefaultURL)
	case o.Account && o.SMTPCapture == "":
		return errNoMailbox
	case !o.Account && o.SMTPCapture != "":
		return errors.New("--smtp-capture goes with --account")
	case o.Return && o.AdminToken == "":
		return errors.New("--return needs an owner's admin token of the shop in SHOP_ADMIN_TOKEN (staff ship and accept the return)")
	case o.Return && o.Live:
		return errors.New("--return refunds: it runs against a test-mode shop only")
	}
	return nil
}

// Step is one step of a purchase run as the report shows it.
type Step struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Ms     int64  `json:"ms"`
	Detail string `json:"detail"`
}

// Report is what `shop purchase --json` prints.
type Report struct {
	URL    string `json:"url"`
	OK     bool   `json:"ok"`
	Passed int    `json:"passed"`
	Failed int    `json:"failed"`
	Ms     int64  `json:"ms"`
	Steps  []Step `json:"steps"`
	// Order is the order the run placed, when it placed one.
	Order *Order `json:"order,omitempty"`
}

// Order identifies the order a run placed.
type Order struct {
	ID           string `json:"id"`
	Number       int64  `json:"number"`
	Total        int64  `json:"total"`
	Currency     string `json:"currency"`
	PaymentMode  string `json:"payment_mode"`
	PermalinkURL string `json:"permalink_url"`
}

// purchaser is one purchase run: the connection, what it has learnt so far
// and the report.
type purchaser struct {
	o     Options
	out   io.Writer // the step lines; nil under --json
	rep   *Report
	http  *http.Client
	cs    *mcp.ClientSession
	tools map[string]*mcp.Tool

	cur     money.Currency
	session contract.Session // the session as last answered
	ready   contract.Session // the session as it was when paid
	done    contract.Session // the completed session
	stopped string           // why the run stopped before paying, when it did on purpose

	link *oauthLink // --account: the linking and its access token
	mail *mailbox   // --account: the shop's emails
}

// Run makes the run and returns its report; under o.JSON it writes
// nothing, otherwise a line per step and a summary to out.
func Run(ctx context.Context, o Options, out io.Writer) *Report {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if o.Address == (Address{}) {
		o.Address = DefaultAddress
	}
	if o.StripeAPI == "" {
		o.StripeAPI = DefaultStripeAPI
	}
	start := time.Now()
	p := &purchaser{
		o: o, rep: &Report{URL: o.URL, Steps: []Step{}},
		http: &http.Client{Transport: retry429{http.DefaultTransport}},
	}
	if !o.JSON {
		p.out = out
	}
	if o.Account {
		defer p.closeLink()
		p.step("smtp capture", func() (string, error) {
			m, err := listenMailbox(o.SMTPCapture)
			if err != nil {
				return "", err
			}
			p.mail = m
			return "listening on " + m.ln.Addr().String() + " for the shop's emails", nil
		})
		if p.mail != nil {
			defer p.mail.close()
		}
	}
	if !o.Account || (p.mail != nil && p.linkAccount(ctx)) {
		p.run(ctx)
	}
	p.release(ctx)
	if p.cs != nil {
		_ = p.cs.Close()
	}
	p.rep.Ms = time.Since(start).Milliseconds()
	p.rep.OK = p.rep.Failed == 0 && p.rep.Passed > 0
	if p.out != nil {
		p.summary()
	}
	return p.rep
}

// step runs one step, reports it as it ends and says whether it held.
func (p *purchaser) step(name string, fn func() (string, error)) bool {
	start := time.Now()
	detail, err := fn()
	s := Step{Name: name, OK: err == nil, Ms: time.Since(start).Milliseconds(), Detail: detail}
	if err != nil {
		s.Detail = err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			s.Detail += fmt.Sprintf(" (the run's --timeout %s is up)", p.o.Timeout)
		}
		p.rep.Failed++
	} else {
		p.rep.Passed++
	}
	p.rep.Steps = append(p.rep.Steps, s)
	if p.out != nil {
		mark := "✓"
		if !s.OK {
			mark = "✗"
		}
		fmt.Fprintf(p.out, "%s %-26s %5d ms  %s\n", mark, s.Name, s.Ms, s.Detail)
	}
	return s.OK
}

func (p *purchaser) summary() {
	r := p.rep
	if r.OK {
		fmt.Fprintf(p.out, "\nPASS: all %d steps held in %d ms", r.Passed, r.Ms)
		switch {
		case r.Order != nil:
			fmt.Fprintf(p.out, "; order #%d, %s, %s mode", r.Order.Number, p.cur.Format(r.Order.Total), r.Order.PaymentMode)
		case p.stopped != "":
			fmt.Fprint(p.out, "; "+p.stopped)
		default:
			fmt.Fprint(p.out, "; live mode: stopped at payment, nothing charged")
		}
		fmt.Fprintln(p.out)
		return
	}
	var failed []string
	for _, s := range r.Steps {
		if !s.OK {
			failed = append(failed, s.Name)
		}
	}
	fmt.Fprintf(p.out, "\nFAIL: %d of %d steps failed in %d ms: %s\n", r.Failed, r.Failed+r.Passed, r.Ms, strings.Join(failed, ", "))
}

// run is the purchase, step by step; a step the next ones need ends the run
// when it fails.
func (p *purchaser) run(ctx context.Context) {
	if !p.step("connect", func() (string, error) { return p.connect(ctx) }) {
		return
	}
	p.step("tools/list", func() (string, error) { return p.checkTools(ctx) })
	var products []summaryRef
	if !p.step("search_products", func() (d string, err error) { products, d, err = p.search(ctx); return }) {
		return
	}
	var items []contract.Item
	for _, sr := range products {
		if len(items) == p.o.Items {
			break
		}
		if !p.step("get_product", func() (d string, err error) { items, d, err = p.pickVariant(ctx, sr, items); return }) {
			return
		}
	}
	if len(items) < p.o.Items && !p.step("enough products", func() (string, error) {
		return "", fmt.Errorf("found %d in-stock variants in %d products, want %d (--items)", len(items), len(products), p.o.Items)
	}) {
		return
	}
	if !p.step("create_checkout_session", func() (string, error) { return p.create(ctx, items) }) {
		return
	}
	if !p.step("payment mode", p.checkMode) {
		return
	}
	if !p.step("update: address", func() (string, error) { return p.address(ctx) }) {
		return
	}
	if !p.step("update: shipping", func() (string, error) { return p.shipping(ctx) }) {
		return
	}
	if p.o.Promo != "" && !p.step("update: promotion", func() (string, error) { return p.promotion(ctx) }) {
		return
	}
	if !p.step("render_checkout", func() (string, error) { return p.render(ctx) }) {
		return
	}
	p.step("template", func() (string, error) { return p.template(ctx) })
	p.ready = p.session
	if p.session.PaymentMode == contract.PaymentLive {
		p.step("complete_checkout (live)", func() (string, error) { return p.refusedInLive(ctx) })
		return
	}
	if p.o.Link {
		if !p.payOnPage(ctx) {
			return
		}
	} else {
		if p.o.Decline && !p.step("complete_checkout: decline", func() (string, error) { return p.payDeclined(ctx) }) {
			return
		}
		if !p.step("complete_checkout", func() (string, error) { return p.pay(ctx) }) {
			return
		}
		p.step("complete_checkout: again", func() (string, error) { return p.payAgain(ctx) })
	}
	p.step("get_order", func() (string, error) { return p.getOrder(ctx) })
	p.step("permalink_url", func() (string, error) { return p.permalink(ctx) })
	p.step("figures", func() (string, error) { return p.figures(ctx) })
	if p.link != nil {
		p.step("list_my_orders", func() (string, error) { return p.myOrders(ctx) })
	}
	if p.o.Return && p.done.Order != nil {
		p.returns(ctx)
	}
}

func (p *purchaser) connect(ctx context.Context) (string, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "shop-purchase", Version: p.o.Version}, nil)
	hc := p.http
	if p.link != nil {
		hc = &http.Client{Transport: withBearer{p.link.accessToken, p.http.Transport}}
	}
	// No standalone SSE stream: a purchase needs only answers to its own requests.
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.o.URL, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return "", fmt.Errorf("initialize %s: %w", p.o.URL, err)
	}
	p.cs = cs
	init := cs.InitializeResult()
	if init == nil || init.ServerInfo == nil {
		return "", errors.New("initialize answered no serverInfo")
	}
	return fmt.Sprintf("%s %s (%q), protocol %s", init.ServerInfo.Name, init.ServerInfo.Version, init.ServerInfo.Title, init.ProtocolVersion), nil
}

// call calls a tool and decodes its structuredContent into out. A result
// with isError, without structuredContent or without a text block is an
// error (CONTRACT.md §3: every tool answers both).
func (p *purchaser) call(ctx context.Context, name string, args, out any) (*mcp.CallToolResult, error) {
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if res.IsError {
		return res, fmt.Errorf("%s answered isError: %s", name, ResultText(res))
	}
	if err := decodeResult(res, out); err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	return res, nil
}

// decodeResult checks a tool result's two forms and decodes its structuredContent.
func decodeResult(res *mcp.CallToolResult, out any) error {
	if strings.TrimSpace(ResultText(res)) == "" {
		return errors.New("no text content block")
	}
	if res.StructuredContent == nil {
		return errors.New("no structuredContent")
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("structuredContent: %w", err)
	}
	return nil
}

// ResultText is the text of a tool result's text blocks, joined.
func ResultText(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// release cancels a session the run created but did not pay (it stopped
// early, or the shop is live), so that its stock goes back on sale at once.
// It gets a few seconds of its own when the run's time is up.
func (p *purchaser) release(ctx context.Context) {
	if p.cs == nil || p.session.ID == "" || p.session.Status.Final() || p.done.Order != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	p.step("cancel_checkout_session", func() (string, error) {
		var s contract.Session
		if _, err := p.call(ctx, "cancel_checkout_session", map[string]any{"checkout_session_id": p.session.ID}, &s); err != nil {
			return "", err
		}
		if s.Status != contract.SessionCanceled {
			return "", fmt.Errorf("status %s, want canceled", s.Status)
		}
		return s.ID + " canceled, unpaid: its stock is released", nil
	})
}
