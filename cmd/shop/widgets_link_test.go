package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"shop/checkout"
)

// External checkout in the browser (issue 9): the checkout widget in a host
// without a payment sheet opens the shop's payment page through the host
// (ui/open-link) and polls the session; the test opens that page in a tab
// of its own, as a host opens a link, and pays there with the sandbox's
// test cards. These run as cases of TestWidgets (its shop and browser).

// payTab is the shop's payment page in a browser tab of its own.
type payTab struct {
	p   *page
	ctx context.Context
}

// openPayTab opens url in a new tab of the test's browser.
func (p *page) openPayTab(url string) *payTab {
	p.t.Helper()
	ctx, cancel := chromedp.NewContext(p.ctx)
	p.t.Cleanup(cancel)
	// The first run opens the tab, which lives as long as the context it
	// runs with: ctx, not one of do's timeouts.
	if err := chromedp.Do(ctx); err != nil {
		p.t.Fatalf("open a tab: %v", err)
	}
	tab := &payTab{p: p, ctx: ctx}
	tab.do("open "+url, chromedp.Navigate(url))
	tab.do("the payment form", chromedp.WaitVisible(chromedp.CSS("#pay-form")))
	return tab
}

// do runs actions in the tab, failing the test (with a screenshot) on error or after 15 s.
func (tab *payTab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tab.p.t.Helper()
	ctx, cancel := context.WithTimeout(tab.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		var body string
		ectx, ecancel := context.WithTimeout(tab.ctx, 5*time.Second)
		defer ecancel()
		if err := evaluate(ectx, `location.href + "\n" + (document.body ? document.body.innerText : "")`, &body); err != nil {
			body = "(unreadable: " + err.Error() + ")"
		}
		tab.shot("failed")
		tab.p.t.Fatalf("payment page: %s: %v\nthe page shows:\n%.2000s", what, err, body)
	}
}

// eval evaluates expr in the tab into out.
func (tab *payTab) eval(expr string, out any) {
	tab.p.t.Helper()
	if err := evaluate(tab.ctx, expr, out); err != nil {
		tab.p.t.Fatalf("payment page: %.200s: %v", expr, err)
	}
}

// pay chooses a test card and submits the form.
func (tab *payTab) pay(card string) {
	tab.p.t.Helper()
	// A click on the radio itself, whatever the page's styling does to it.
	tab.do("choose "+card,
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById(%q).click()`, "card-"+card)),
		chromedp.Click(chromedp.CSS("#pay-submit")),
	)
}

// waitURL waits until the tab's address contains part.
func (tab *payTab) waitURL(part string) string {
	tab.p.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		loc, err := chromedp.Run(tab.ctx, chromedp.Location())
		if err == nil && strings.Contains(loc, part) {
			return loc
		}
		if time.Now().After(deadline) {
			tab.shot("timeout")
			tab.p.t.Fatalf("the payment page is at %q (%v), not at …%s…", loc, err, part)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (tab *payTab) shot(name string) {
	tab.p.t.Helper()
	ctx, cancel := context.WithTimeout(tab.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tab.p.t.Logf("screenshot %s: %v", name, err)
		return
	}
	tab.p.n++
	file := filepath.Join(tab.p.shots, fmt.Sprintf("%s-%02d-page-%s.png", strings.ReplaceAll(tab.p.t.Name(), "/", "_"), tab.p.n, name))
	if err := os.WriteFile(file, png, 0o644); err != nil {
		tab.p.t.Logf("screenshot %s: %v", name, err)
	}
}

// payByLink renders the checkout of a ready session in a host without a
// payment sheet, clicks Pay, and answers the session and the link the
// widget asked the host to open.
func (p *page) payByLink() (checkout.Session, string) {
	p.t.Helper()
	s := p.readySession()
	p.loadCheckout(s.ID, loadOptions{OpenAI: true, NoSheet: true})
	if p.disabled("#pay") {
		p.t.Fatal("Pay is disabled for a ready session")
	}
	if hint := p.text("#pay-hint"); !strings.Contains(hint, "payment page") {
		p.t.Errorf("Pay's hint %q does not say a payment page opens", hint)
	}
	p.pressPay()
	p.waitEvent("open-link")
	p.waitFor("the waiting state", `document.querySelector("#pay-waiting") && document.querySelector("#pay-check")`)
	links := p.events("open-link")
	if len(links) != 1 || !strings.Contains(links[0].URL, "/pay/"+s.ID) {
		p.t.Fatalf("open-link %+v, want the payment page of %s", links, s.ID)
	}
	var made bool
	for _, c := range p.events("tools/call") {
		var args struct {
			ID string `json:"checkout_session_id"`
		}
		_ = json.Unmarshal(c.Arguments, &args)
		made = made || c.Name == "create_payment_link" && args.ID == s.ID
	}
	if !made {
		p.t.Errorf("tools/call %+v: no create_payment_link for %s", p.events("tools/call"), s.ID)
	}
	return s, links[0].URL
}

func testPaymentLink(t *testing.T, p *page) {
	s, url := p.payByLink()
	p.shot("waiting")
	if got := p.text("#pay-waiting"); !strings.Contains(got, "Finish paying in the page that opened") {
		t.Errorf("the waiting state says %q", got)
	}

	tab := p.openPayTab(url)
	var email string
	tab.eval(`document.getElementById("email").value`, &email)
	if !strings.EqualFold(email, buyer["email"].(string)) {
		t.Errorf("the page's email is %q, want the buyer's %q", email, buyer["email"])
	}
	var checked string
	tab.eval(`(document.querySelector('input[name="card"]:checked') || {}).value || ""`, &checked)
	if checked != "pm_card_visa" {
		t.Errorf("the page's default card is %q, want pm_card_visa", checked)
	}
	tab.shot("form")

	// A decline: the page says so and lets the buyer retry; the widget keeps waiting.
	tab.pay("pm_card_visa_chargeDeclined")
	tab.do("the decline", chromedp.WaitVisible(chromedp.CSS("#pay-error")), chromedp.WaitVisible(chromedp.CSS("#pay-form")))
	tab.shot("declined")
	var declined string
	tab.eval(`document.getElementById("pay-error").innerText`, &declined)
	if strings.TrimSpace(declined) == "" {
		t.Error("the decline shows no reason")
	}
	if st := p.session(s.ID).Status; st != checkout.Ready {
		t.Errorf("after the decline the session is %s, want %s", st, checkout.Ready)
	}
	time.Sleep(2500 * time.Millisecond) // a poll or more: the decline ends nothing
	var view string
	p.eval(`(document.querySelector("[data-view]") || {dataset: {}}).dataset.view || ""`, &view)
	if view != "waiting" {
		t.Errorf("after the decline the widget shows the %q view, want waiting", view)
	}

	// Paid: the page becomes the receipt, and the widget shows it too.
	tab.pay("pm_card_visa")
	tab.do("the receipt page", chromedp.WaitVisible(chromedp.CSS("#return-note")))
	tab.shot("receipt")
	var note string
	tab.eval(`document.getElementById("return-note").innerText`, &note)
	if !strings.Contains(note, "return to the conversation") {
		t.Errorf("the receipt page's note %q", note)
	}
	done := p.receipt(s.ID, "on the page")
	var told bool
	for _, m := range p.events("model-context") {
		told = told || strings.Contains(m.Text, fmt.Sprintf("Order #%d", done.Order.Number))
	}
	if !told {
		t.Errorf("the model was not told of the order: %+v", p.events("model-context"))
	}
	if sheets := p.events("checkout"); len(sheets) != 0 {
		t.Errorf("requestCheckout was called without a payment sheet: %+v", sheets)
	}
}

func testPaymentLinkCanceled(t *testing.T, p *page) {
	s, url := p.payByLink()
	tab := p.openPayTab(url)
	tab.do("cancel", chromedp.Click(chromedp.CSS("#pay-cancel")))
	tab.waitURL("/cancel")
	tab.shot("canceled")

	p.waitFor("the cart with the notice", `document.querySelector('[data-view="checkout"]') && document.querySelector("#pay-notice")`)
	p.shot("canceled")
	if got := p.text("#pay-notice"); got != "Payment canceled; your cart is kept." {
		t.Errorf("the notice says %q", got)
	}
	if got := p.session(s.ID); got.Status != checkout.Ready || len(got.LineItems) != len(s.LineItems) {
		t.Errorf("after the cancel the session is %s with %d lines, want %s with %d", got.Status, len(got.LineItems), checkout.Ready, len(s.LineItems))
	}
	if p.disabled("#pay") {
		t.Error("Pay is disabled after a canceled payment")
	}

	// Pay is never a dead button: the shop's refusal of a link shows.
	var canceled checkout.Session
	p.call("cancel_checkout_session", map[string]any{"checkout_session_id": s.ID}, &canceled)
	p.pressPay()
	p.waitFor("the refusal", `document.querySelector("#pay-error") && !document.querySelector("#pay").disabled`)
	if got := p.text("#pay-error"); !strings.HasPrefix(got, "The payment page could not be opened: ") || len(got) < len("The payment page could not be opened: ")+5 {
		t.Errorf("the refusal shows %q", got)
	}
	if links := p.events("open-link"); len(links) != 1 {
		t.Errorf("open-link %+v after a refused link, want only the first", links)
	}
}
