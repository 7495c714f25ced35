package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"shop/contract"
)

// The browser tests render the widgets in headless Chromium (Debian's
// chromium) inside the test host page (widgets/web/testhost), which the
// build writes to widgets/web/build/testhost.html. Without Chromium or that
// page they are skipped, except under CI=true, where they fail.

// chromiumPath is the browser the tests drive: $SHOP_CHROMIUM, else Debian's.
func chromiumPath() string {
	if p := os.Getenv("SHOP_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

const testHostPage = "../../widgets/web/build/testhost.html"

// needBrowser skips (or, under CI=true, fails) a test that cannot run here.
func needBrowser(t *testing.T) (chromium string, page []byte) {
	t.Helper()
	if raceDetector {
		// chromedp v0.23 reads and writes its DOM node maps from two
		// goroutines (Target.documentUpdated and Target.domEvent), which the
		// race detector reports in our tests now and then. test.sh runs the
		// browser tests again without -race.
		t.Skip("the browser tests run without -race: chromedp races with itself")
	}
	missing := func(what string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; CI=true requires the browser tests (./test.sh installs what they need)", what)
		}
		t.Skipf("%s: skipping the browser tests (./test.sh installs what they need)", what)
	}
	chromium = chromiumPath()
	if _, err := os.Stat(chromium); err != nil {
		missing("no Chromium at " + chromium + " (apt-get install chromium, or set SHOP_CHROMIUM)")
	}
	page, err := os.ReadFile(testHostPage)
	if err != nil {
		missing("no test host page (cd widgets/web && npm ci && npm run build)")
	}
	return chromium, page
}

// artifacts is where screenshots go: $SHOP_TEST_ARTIFACTS, else a temp dir.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SHOP_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "shop-test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// testHost serves the test host page and relays /mcp to the shop, as a
// host's backend calls an MCP server: server to server, without the
// browser's Origin, cookies or fetch metadata.
func testHost(t *testing.T, page []byte, shopURL string) string {
	t.Helper()
	target, err := url.Parse(shopURL)
	if err != nil {
		t.Fatal(err)
	}
	// A transport of its own: httptest.Server.Close closes the idle
	// connections of http.DefaultTransport, and another test's host closing
	// while this relay takes one of them fails the browser's fetch.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(transport.CloseIdleConnections)
	relay := &httputil.ReverseProxy{Transport: transport, Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.URL.Path = "/mcp"
		r.Out.Host = target.Host
		for _, h := range []string{"Origin", "Referer", "Cookie", "Sec-Fetch-Site", "Sec-Fetch-Mode", "Sec-Fetch-Dest"} {
			r.Out.Header.Del(h)
		}
	}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	})
	mux.Handle("/mcp", relay)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// browser starts headless Chromium for the test, with a fresh profile and
// nothing reaching out beyond this machine.
func browser(t *testing.T, chromium string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1000, 1000),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-proxy-server", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	if err := chromedp.Do(bctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start %s: %v", chromium, err)
	}
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return bctx
}

// page is the test host in a tab of its own, and the widget it renders.
type page struct {
	t      *testing.T
	ctx    context.Context // the host page's tab
	widget context.Context // the widget's document, after load
	shots  string
	n      int
}

// openHost opens the test host in a new tab of the browser.
func openHost(t *testing.T, bctx context.Context, hostURL string) *page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelT)
	if err := chromedp.Do(ctx, chromedp.Navigate(hostURL), chromedp.WaitReady(chromedp.CSS("#frame"))); err != nil {
		t.Fatalf("open the test host: %v", err)
	}
	return &page{t: t, ctx: ctx, shots: artifacts(t)}
}

// evaluate evaluates expr in ctx, awaiting a promise, and decodes its JSON
// value into out (unless out is nil).
func evaluate(ctx context.Context, expr string, out any) error {
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// host evaluates expr in the host page into out.
func (p *page) host(expr string, out any) {
	p.t.Helper()
	if err := evaluate(p.ctx, expr, out); err != nil {
		p.t.Fatalf("host: %.200s: %v", expr, err)
	}
}

// call runs a tool of the shop from the host page.
func (p *page) call(name string, args any, out any) {
	p.t.Helper()
	a, _ := json.Marshal(args)
	p.host(fmt.Sprintf("hostAPI.call(%q, %s)", name, a), out)
}

// loadOptions are the test host's load options (widgets/web/testhost/host.ts).
type loadOptions struct {
	URI    string         `json:"uri"`
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"args"`
	Theme  string         `json:"theme,omitempty"`
	Locale string         `json:"locale,omitempty"`
	Width  int            `json:"width,omitempty"`
	OpenAI bool           `json:"openai"`
	// OpenAIOnly is a host that speaks window.openai alone (no MCP Apps bridge).
	OpenAIOnly bool `json:"openaiOnly,omitempty"`
	// Output, when set, is the tool output the host sends instead of calling
	// the tool (what it kept of an old call); "null" sends none.
	Output    json.RawMessage   `json:"output,omitempty"`
	NoSheet   bool              `json:"noSheet,omitempty"`
	Cards     []string          `json:"cards,omitempty"`
	Styles    map[string]string `json:"styles,omitempty"`
	EvilImage string            `json:"evilImage,omitempty"`
	// Currencies replace the currency of each product's prices in turn.
	Currencies []string `json:"currencies,omitempty"`
	// HoldResult sends the tool input and holds the result until release.
	HoldResult bool `json:"holdResult,omitempty"`
	// Sheets is what each requestCheckout does in turn: pay, cancel, fail, unknown.
	Sheets []string `json:"sheets,omitempty"`
	// Fullscreen: the host offers the fullscreen display mode.
	Fullscreen bool `json:"fullscreen,omitempty"`
	// Display replaces every checkout session's display convention.
	Display *contract.Display `json:"display,omitempty"`
}

// metrics are what the test host measured of a load.
type metrics struct {
	ReadMs        float64 `json:"readMs"`
	FirstRenderMs float64 `json:"firstRenderMs"`
	Bytes         int     `json:"bytes"`
}

// load renders a widget and attaches p.widget to its document.
func (p *page) load(o loadOptions) metrics {
	p.t.Helper()
	b, _ := json.Marshal(o)
	var m metrics
	p.host(fmt.Sprintf("hostAPI.load(%s)", b), &m)
	p.attach(`document.body && document.body.dataset.state === "ready"`)
	return m
}

// loadPending loads a widget whose tool result the host holds (the tool is
// still running) and attaches p.widget to it; release sends the result.
func (p *page) loadPending(o loadOptions) {
	p.t.Helper()
	o.HoldResult = true
	b, _ := json.Marshal(o)
	p.host(fmt.Sprintf("hostAPI.load(%s)", b), nil)
	p.attach(`!!document.body && document.body.dataset.state !== "ready" && !!document.querySelector('[role="status"]')`)
}

// release sends the held tool result and answers how long the widget took to show it.
func (p *page) release() metrics {
	p.t.Helper()
	var m metrics
	p.host("hostAPI.release()", &m)
	return m
}

// logRender logs a widget's first render and size, which test.sh prints.
func logRender(t *testing.T, widget, how string, m metrics) {
	t.Helper()
	html, err := os.ReadFile(filepath.Join("../../widgets/dist", widget+".html"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	_, _ = w.Write(html)
	_ = w.Close()
	t.Logf("first render: %s widget, %s: %.0f ms after the HTML was set (resources/read %.0f ms); %d bytes, %d gzipped by Go",
		widget, how, m.FirstRenderMs, m.ReadMs, len(html), gz.Len())
}

// attach finds the widget's iframe, which Chromium runs as a target of its
// own (a sandboxed, opaque-origin document), and attaches p.widget to it
// once ready (a JavaScript expression) holds in its document.
func (p *page) attach(ready string) {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		infos, err := chromedp.Targets(p.ctx)
		if err != nil {
			p.t.Fatal(err)
		}
		var frame *target.Info
		for _, info := range infos {
			if info.Type == "iframe" && info.Attached {
				frame = info
			}
		}
		if frame == nil {
			for _, info := range infos {
				if info.Type == "iframe" {
					frame = info
				}
			}
		}
		if frame != nil {
			ctx, cancel := chromedp.NewContext(p.ctx, chromedp.WithTargetID(frame.TargetID))
			p.t.Cleanup(cancel)
			var ok bool
			if err := evaluate(ctx, ready, &ok); err == nil && ok {
				p.widget = ctx
				return
			}
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no widget iframe target among %d targets", len(infos))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// in runs actions in the widget's document.
func (p *page) in(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.widget, actions...); err != nil {
		p.shot("failed")
		p.t.Fatalf("widget: %v", err)
	}
}

// eval evaluates expr in the widget's document into out.
func (p *page) eval(expr string, out any) {
	p.t.Helper()
	if err := evaluate(p.widget, expr, out); err != nil {
		p.t.Fatalf("widget: %.200s: %v", expr, err)
	}
}

// waitFor polls expr in the widget until it is truthy.
func (p *page) waitFor(what, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.widget, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		var body string
		_ = evaluate(p.widget, `document.body.innerText`, &body)
		p.shot("timeout")
		p.t.Fatalf("waiting for %s (%s): %v\nthe widget shows:\n%s", what, expr, err, body)
	}
}

// waitHost polls expr in the host page until it is truthy.
func (p *page) waitHost(what, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		p.shot("timeout")
		p.t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// waitEvent waits until the test host has recorded an event of kind.
func (p *page) waitEvent(kind string) {
	p.t.Helper()
	p.waitHost("a "+kind+" event", fmt.Sprintf(`hostAPI.events.some(e => e.kind === %q)`, kind))
}

// typeInto replaces the text of an input as a buyer does: click, select all, type.
func (p *page) typeInto(sel, text string) {
	p.t.Helper()
	p.in(
		chromedp.Click(chromedp.CSS(sel)),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).select()`, sel)),
		chromedp.KeyEvent(text),
	)
}

// text is the visible text of the first element matching sel ("" if none).
func (p *page) text(sel string) string {
	p.t.Helper()
	var s string
	p.eval(fmt.Sprintf(`(document.querySelector(%q) || {}).innerText || ""`, sel), &s)
	return s
}

// event is one thing the widget asked of the host, as the test host records it.
type event struct {
	Kind       string          `json:"kind"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Text       string          `json:"text"`
	URL        string          `json:"url"`
	BlockedURI string          `json:"blockedURI"`
	Directive  string          `json:"directive"`
	Token      string          `json:"token"`
	Structured json.RawMessage `json:"structured"`
	// Via is how the widget asked, in a host without the bridge:
	// callTool or openExternal.
	Via string `json:"via"`
	// Mode is a payment sheet's mode (checkout) or a display mode (display-mode).
	Mode string `json:"mode"`
	// Modes are the display modes the widget declared (app-capabilities).
	Modes []string `json:"modes"`
}

func (p *page) events(kind string) []event {
	p.t.Helper()
	var evs []event
	p.host(fmt.Sprintf(`hostAPI.events.filter(e => e.kind === %q)`, kind), &evs)
	return evs
}

// violations is an error naming every CSP violation reported so far.
func (p *page) violations() error {
	p.t.Helper()
	evs := p.events("csp")
	if len(evs) == 0 {
		return nil
	}
	var sb strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&sb, "\n- %s blocked %s", e.Directive, e.BlockedURI)
	}
	return fmt.Errorf("the widget broke its CSP:%s", sb.String())
}

// shot saves a screenshot of the host page (with the widget) as an artifact.
func (p *page) shot(name string) {
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Logf("screenshot %s: %v", name, err)
		return
	}
	p.n++
	file := filepath.Join(p.shots, fmt.Sprintf("%s-%02d-%s.png", strings.ReplaceAll(p.t.Name(), "/", "_"), p.n, name))
	if err := os.WriteFile(file, png, 0o644); err != nil {
		p.t.Logf("screenshot %s: %v", name, err)
	}
}
