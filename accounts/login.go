package accounts

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"math/big"
	"net"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/ory/fosite"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"shop"
	"shop/database"
	"shop/i18n"
	"shop/notify"
)

// The login: GET /oauth/authorize checks the client's request and starts a
// login flow, named by a cookie, whose request every form carries sealed
// and bound to that cookie (login_request.go); the buyer types their email
// (POST /login/email), which writes the flow's row of login_flows and sends
// a six-digit code through the outbox, types the code (POST /login/code:
// five tries, ten minutes), and allows or denies the client (POST
// /login/consent), which ends the flow with fosite's redirect to the
// client. Everything secret in a flow (its id, the code) is stored hashed;
// nothing of it is logged.

//go:embed login.html
var pageFS embed.FS

const (
	flowCookie    = "shop_login"
	flowLifespan  = 30 * time.Minute
	loginCodeLife = 10 * time.Minute
	maxCodeTries  = 5
	maxQueryLen   = 8 << 10
	maxEmailLen   = 254
	maxFormBytes  = 32 << 10 // an email or a code, and the sealed request (a query of maxQueryLen is 15 KB sealed)
)

type pages struct {
	s    *Server
	tmpl *template.Template
}

func newPages(s *Server) (*pages, error) {
	t, err := template.ParseFS(pageFS, "login.html")
	if err != nil {
		return nil, fmt.Errorf("accounts: parse pages: %w", err)
	}
	return &pages{s: s, tmpl: t}, nil
}

// flowRow is a login flow: its row once a code was sent, and what its
// sealed request says (AuthorizeQuery, kept in the forms, not the row).
type flowRow struct {
	IDHash         string `gorm:"primaryKey"`
	CSRFHash       string `gorm:"column:csrf_hash"` // of the sealed request
	AuthorizeQuery string `gorm:"-"`
	ClientName     string
	Email          string
	CodeHash       string
	CodeExpiresAt  *time.Time
	Tries          int
	AccountID      *string
	Address        string
	// Network is Address's IPv6 /48 (shop.NetworkOf), "" for IPv4: the
	// second tier of the codes' limit per address.
	Network   string
	CreatedAt time.Time
	ExpiresAt time.Time
}

func (flowRow) TableName() string { return "login_flows" }

// page is what the templates show, in L's language (the request's
// Accept-Language); Title and Error are catalog keys, filled in by render.
type page struct {
	L                                             *i18n.Lang
	Title, Shop, Client, Host, Email, CSRF, Error string
	// Self says the client registered itself; Detail is an OAuth error code.
	Self   bool
	Detail string
	// Scopes are the consent's lines; Payments the payments line, with its
	// box ticked when PaymentsOn.
	Scopes     []string
	Payments   string
	PaymentsOn bool
}

func (p *pages) render(w http.ResponseWriter, r *http.Request, status int, name string, v page) {
	v.Shop = p.s.opts.Shop
	v.L = i18n.FromRequest(r)
	if v.Title == "" {
		v.Title = "login_title"
	}
	v.Title = v.L.T(v.Title, "shop", v.Shop, "client", v.Client)
	if v.L.Has(v.Error) {
		v.Error = v.L.T(v.Error) // else a message already said in the language
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	if err := p.tmpl.ExecuteTemplate(w, name, v); err != nil {
		p.s.logger.Error("render login page", "page", name, "err", err)
	}
}

// fail answers a page that says why the sign-in stopped: msg is a catalog key.
func (p *pages) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	p.render(w, r, status, "message", page{Title: "login_stopped_title", Error: msg})
}

func secret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// authorize serves GET /oauth/authorize: fosite checks the client, its
// redirect URI, the response type and scopes; the shop checks PKCE S256
// and the resource, then shows the email page of a new login flow, whose
// request the page carries sealed: nothing is stored yet.
func (p *pages) authorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if len(r.URL.RawQuery) > maxQueryLen {
		p.fail(w, r, http.StatusRequestURITooLong, "login_too_long")
		return
	}
	ar, err := p.s.newAuthorizeRequest(ctx, r)
	if err == nil {
		err = p.s.checkAuthorize(ar)
	}
	if err != nil {
		p.refuse(w, r, ar, err)
		return
	}
	client, _ := ar.GetClient().(*Client)
	id := secret()
	csrf := p.s.seal(pending{Flow: hash(id), Query: []byte(r.URL.RawQuery), Client: client.Name, Expires: p.s.now().Add(flowLifespan).Unix()})
	http.SetCookie(w, &http.Cookie{
		Name: flowCookie, Value: id, Path: "/login/", HttpOnly: true, MaxAge: int(flowLifespan.Seconds()),
		Secure: strings.HasPrefix(p.s.issuer, "https://"), SameSite: http.SameSiteLaxMode,
	})
	p.render(w, r, http.StatusOK, "email", named(page{CSRF: csrf}, ar))
}

// checkAuthorize refuses what fosite lets through and the shop does not:
// a code challenge other than S256, and a resource other than /mcp.
func (s *Server) checkAuthorize(ar fosite.AuthorizeRequester) error {
	form := ar.GetRequestForm()
	if form.Get("code_challenge") == "" || form.Get("code_challenge_method") != "S256" {
		return fosite.ErrInvalidRequest.WithHint("PKCE is required: send code_challenge with code_challenge_method S256.")
	}
	return s.checkResource(form["resource"])
}

// address is the client's address as the rate limits know it.
func address(r *http.Request) string {
	if a := shop.BuyerFrom(r.Context()).Address; a != "" {
		return a
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// flow opens the login flow the request's cookie names: the request its
// form carries sealed, refused unless bound to that cookie, and the flow's
// row once a code was sent (before, a row not stored yet). ok is false when
// the page was answered.
func (p *pages) flow(w http.ResponseWriter, r *http.Request) (string, flowRow, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		p.fail(w, r, http.StatusBadRequest, "login_form_unread")
		return "", flowRow{}, false
	}
	c, err := r.Cookie(flowCookie)
	if err != nil {
		p.fail(w, r, http.StatusBadRequest, "login_expired")
		return "", flowRow{}, false
	}
	now := p.s.now().UTC()
	sealed := r.PostFormValue("csrf")
	req, err := p.s.open(sealed, now)
	if errors.Is(err, errSealExpired) {
		p.fail(w, r, http.StatusBadRequest, "login_expired")
		return "", flowRow{}, false
	}
	if err != nil || subtle.ConstantTimeCompare([]byte(req.Flow), []byte(hash(c.Value))) != 1 {
		p.fail(w, r, http.StatusForbidden, "login_csrf")
		return "", flowRow{}, false
	}
	row := flowRow{IDHash: req.Flow, CSRFHash: hash(sealed), ClientName: req.Client, Address: address(r), Network: shop.NetworkOf(address(r)),
		CreatedAt: now, ExpiresAt: time.Unix(req.Expires, 0).UTC()}
	var stored flowRow
	err = p.s.db.WithContext(r.Context()).Where("id_hash = ?", req.Flow).Take(&stored).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound): // no code asked for yet
	case err != nil:
		p.s.logger.ErrorContext(r.Context(), "read login", "err", err)
		p.fail(w, r, http.StatusServiceUnavailable, "login_check_failed")
		return "", flowRow{}, false
	case subtle.ConstantTimeCompare([]byte(stored.CSRFHash), []byte(row.CSRFHash)) != 1:
		p.fail(w, r, http.StatusForbidden, "login_csrf") // another request than the code was sent for
		return "", flowRow{}, false
	default:
		row = stored
	}
	row.AuthorizeQuery = string(req.Query)
	return c.Value, row, true
}

// email serves POST /login/email: it sends a code to the email, at most
// one per flow, within the rate limits per email and per address. Its
// answer is the same whether or not the email has an account or orders.
func (p *pages) email(w http.ResponseWriter, r *http.Request) {
	id, row, ok := p.flow(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	csrf := r.PostFormValue("csrf")
	email := NormalizeEmail(r.PostFormValue("email"))
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > maxEmailLen || !p.s.opts.Emails {
		msg := "login_bad_email"
		if !p.s.opts.Emails {
			msg = "login_no_email"
		}
		p.render(w, r, http.StatusBadRequest, "email", p.describe(ctx, row, i18n.FromRequest(r), page{Email: email, CSRF: csrf, Error: msg}))
		return
	}
	code, err := randomCode()
	if err == nil {
		err = p.sendCode(ctx, id, row, email, code, i18n.FromRequest(r))
	}
	switch {
	case errors.Is(err, errTooMany):
		p.render(w, r, http.StatusTooManyRequests, "email", p.describe(ctx, row, i18n.FromRequest(r), page{Email: email, CSRF: csrf,
			Error: "login_too_many"}))
	case errors.Is(err, errCodeSent):
		p.render(w, r, http.StatusOK, "code", page{Email: row.Email, CSRF: csrf, Error: "login_code_already"})
	case err != nil:
		p.s.logger.ErrorContext(ctx, "send login code", "err", err)
		p.render(w, r, http.StatusServiceUnavailable, "email", p.describe(ctx, row, i18n.FromRequest(r), page{Email: email, CSRF: csrf,
			Error: "login_send_failed"}))
	default:
		p.render(w, r, http.StatusOK, "code", page{Email: email, CSRF: csrf})
	}
}

var (
	errTooMany  = errors.New("too many codes asked for")
	errCodeSent = errors.New("a code was already sent")
)

// randomCode is a uniformly random six-digit code.
func randomCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", fmt.Errorf("code: %w", err)
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

// sendCode stores the flow's row with the code's hash and writes its
// email, in the language of the sign-in page, to the outbox, in one
// transaction, after checking the rate limits.
func (p *pages) sendCode(ctx context.Context, id string, row flowRow, email, code string, l *i18n.Lang) error {
	return database.Transact(ctx, p.s.db, func(tx *gorm.DB) error {
		// The counts below are taken one transaction at a time per email
		// and per address (email first, always: no two wait on each other).
		for _, key := range []string{"login.email:" + email, addressLock("login", row.Address)} {
			if err := database.LockKey(tx, key); err != nil {
				return err
			}
		}
		if err := countCodes(tx, email, row.Address, row.Network); err != nil {
			return err
		}
		expires := database.Now(tx).UTC().Add(loginCodeLife)
		row.Email, row.CodeHash, row.CodeExpiresAt, row.Tries = email, hash(id+code), &expires, 0
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		if res.Error != nil {
			return fmt.Errorf("store code: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return errCodeSent
		}
		return notify.Enqueue(ctx, tx, codeEmail(l, p.s.opts.Shop, "login/"+row.IDHash, email, code))
	})
}

// codeEmailKind is the kind of the emails that carry a sign-in code.
const codeEmailKind = "login_code"

// codeEmail is the email that carries a sign-in code, in l's words.
func codeEmail(l *i18n.Lang, shopName, key, to, code string) notify.Email {
	intro, note := l.T("login_mail_intro", "shop", shopName), l.T("login_mail_note")
	return notify.Email{
		Key: key, Kind: codeEmailKind, To: to,
		Subject: l.T("login_mail_subject", "shop", shopName),
		Text:    intro + " " + code + "\n\n" + note + "\n",
		HTML: "<p>" + template.HTMLEscapeString(intro) + "</p>" +
			`<p style="font-size:1.6em;font-weight:700;letter-spacing:.2em">` + code + "</p>" +
			"<p>" + template.HTMLEscapeString(note) + "</p>",
	}
}

// code serves POST /login/code: each try is counted in the database before
// the code is compared, so a sixth try is refused whatever it says.
func (p *pages) code(w http.ResponseWriter, r *http.Request) {
	id, row, ok := p.flow(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	csrf := r.PostFormValue("csrf")
	now := p.s.now().UTC()
	res := p.s.db.WithContext(ctx).Model(&flowRow{}).
		Where("id_hash = ? AND code_hash <> '' AND account_id IS NULL AND tries < ? AND code_expires_at > ?", row.IDHash, maxCodeTries, now).
		Update("tries", gorm.Expr("tries + 1"))
	if res.Error != nil {
		p.s.logger.ErrorContext(ctx, "count code try", "err", res.Error)
		p.fail(w, r, http.StatusServiceUnavailable, "login_check_failed")
		return
	}
	if res.RowsAffected == 0 {
		p.fail(w, r, http.StatusForbidden, "login_code_dead")
		return
	}
	typed := strings.TrimSpace(r.PostFormValue("code"))
	if subtle.ConstantTimeCompare([]byte(hash(id+typed)), []byte(row.CodeHash)) != 1 {
		left := maxCodeTries - row.Tries - 1
		l := i18n.FromRequest(r)
		msg := l.N("login_code_wrong", left)
		if left <= 0 {
			msg = l.T("login_code_last")
		}
		p.render(w, r, http.StatusUnprocessableEntity, "code", page{Email: row.Email, CSRF: csrf, Error: msg})
		return
	}
	acct, err := Ensure(ctx, p.s.db, row.Email)
	if err == nil {
		err = p.s.db.WithContext(ctx).Model(&flowRow{}).Where("id_hash = ?", row.IDHash).
			Updates(map[string]any{"account_id": acct.ID, "code_hash": ""}).Error
	}
	if err != nil {
		p.s.logger.ErrorContext(ctx, "sign in", "err", err)
		p.fail(w, r, http.StatusServiceUnavailable, "login_signin_failed")
		return
	}
	p.render(w, r, http.StatusOK, "consent", p.describe(ctx, row, i18n.FromRequest(r),
		page{Title: "login_connect_title", Email: acct.Email, CSRF: csrf}))
}

// rebuild is the flow's authorization request as fosite read it at first.
func (p *pages) rebuild(ctx context.Context, row flowRow) (fosite.AuthorizeRequester, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.s.issuer+"/oauth/authorize?"+row.AuthorizeQuery, nil)
	if err != nil {
		return nil, fmt.Errorf("rebuild authorization request: %w", err)
	}
	return p.s.newAuthorizeRequest(ctx, req)
}

// consent serves POST /login/consent: the flow ends (once: its row is
// deleted by the first answer), and the buyer's answer goes to the client.
func (p *pages) consent(w http.ResponseWriter, r *http.Request) {
	_, row, ok := p.flow(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	if row.AccountID == nil {
		p.fail(w, r, http.StatusForbidden, "login_code_first")
		return
	}
	res := p.s.db.WithContext(ctx).Where("id_hash = ? AND account_id IS NOT NULL", row.IDHash).Delete(&flowRow{})
	if res.Error != nil || res.RowsAffected == 0 {
		p.fail(w, r, http.StatusBadRequest, "login_finished")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: flowCookie, Path: "/login/", MaxAge: -1})
	ar, err := p.rebuild(ctx, row)
	if err != nil {
		p.refuse(w, r, ar, err)
		return
	}
	if r.PostFormValue("decision") != "allow" {
		p.s.provider.WriteAuthorizeError(ctx, issWriter(w, p.s.issuer), ar, fosite.ErrAccessDenied.WithHint("The buyer denied the request."))
		return
	}
	grant(ar, r)
	ar.GrantAudience(p.s.resource)
	resp, err := p.s.provider.NewAuthorizeResponse(ctx, ar, &fosite.DefaultSession{Subject: *row.AccountID})
	if err != nil {
		p.refuse(w, r, ar, err)
		return
	}
	p.s.provider.WriteAuthorizeResponse(ctx, issWriter(w, p.s.issuer), ar, resp)
}

// issWriter adds the issuer as iss (RFC 9207) to the redirect back to the
// client that fosite writes, a code's or an error's: fosite has no option
// for it on errors.
func issWriter(w http.ResponseWriter, issuer string) http.ResponseWriter {
	return &issResponse{ResponseWriter: w, issuer: issuer}
}

type issResponse struct {
	http.ResponseWriter
	issuer string
}

func (w *issResponse) WriteHeader(code int) {
	if code >= 300 && code < 400 {
		if u, err := url.Parse(w.Header().Get("Location")); err == nil && u.IsAbs() {
			q := u.Query()
			if q.Get("state") == "" {
				q.Del("state") // fosite's "state=" for a request that sent none
			}
			if q.Get("iss") == "" {
				q.Set("iss", w.issuer)
			}
			u.RawQuery = q.Encode()
			w.Header().Set("Location", u.String())
		}
	}
	w.ResponseWriter.WriteHeader(code)
}
