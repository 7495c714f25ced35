package accounts

import (
	"context"
	"errors"
	"net/http"

	"github.com/ory/fosite"

	"shop"
	"shop/i18n"
)

// What the sign-in and consent pages say of an authorization request: the
// client by its name, the host its code goes to (or its metadata
// document's host) and whether it registered itself; the scopes it asks
// for, payments on a line of its own that the buyer ticks; and, for a
// request the shop refuses, the shop's own page rather than a redirect to
// a URI nobody vouched for (RFC 9700 §4.11: no open redirector).

// leastScopes are granted to a client that asks for no scope: reading the
// buyer's orders, never every scope.
var leastScopes = []string{shop.ScopeOrdersRead}

// paymentsField is the consent form's checkbox that grants payments.
const paymentsField = "payments"

// scopeWords are the catalogs' keys of what each scope lets the client do,
// on the consent page.
var scopeWords = map[string]string{
	shop.ScopeOrdersRead: "scope_orders_read",
	shop.ScopeAccount:    "scope_account",
	shop.ScopePayments:   "scope_payments",
}

// askedScopes are the scopes a client asked for, leastScopes when none.
func askedScopes(ar fosite.AuthorizeRequester) []string {
	if len(ar.GetRequestedScopes()) == 0 {
		return leastScopes
	}
	return ar.GetRequestedScopes()
}

// named fills v's client, host and self-registration from the request.
func named(v page, ar fosite.AuthorizeRequester) page {
	c, ok := ar.GetClient().(*Client)
	if !ok {
		return v
	}
	v.Host, v.Self = c.Host(ar.GetRedirectURI()), c.SelfRegistered
	v.Client = c.Name
	if v.Client == "" {
		v.Client = v.Host
	}
	return v
}

// describe is v naming the flow's client and, for the consent page, the
// scopes it asks for in words: payments apart, ticked unless the client
// registered itself.
func (p *pages) describe(ctx context.Context, row flowRow, l *i18n.Lang, v page) page {
	v.Client = row.ClientName
	ar, err := p.rebuild(ctx, row)
	if err != nil {
		return v
	}
	v = named(v, ar)
	for _, s := range askedScopes(ar) {
		if s == shop.ScopePayments {
			v.Payments, v.PaymentsOn = l.T(scopeWords[s]), !v.Self
			continue
		}
		v.Scopes = append(v.Scopes, l.T(scopeWords[s]))
	}
	return v
}

// grant grants ar the scopes it asked for that the buyer allowed: payments
// only when its box was ticked.
func grant(ar fosite.AuthorizeRequester, r *http.Request) {
	for _, s := range askedScopes(ar) {
		if s == shop.ScopePayments && r.PostFormValue(paymentsField) != "on" {
			continue
		}
		ar.GrantScope(s)
	}
}

// refuse answers an authorization request the shop will not serve on its
// own page, naming what is wrong in the buyer's language and fosite's error
// code for the client's developers; it never redirects, since the client
// or its redirect URI may be anyone's.
func (p *pages) refuse(w http.ResponseWriter, r *http.Request, ar fosite.AuthorizeRequester, err error) {
	p.s.logRefusal(r.Context(), "authorization refused", err)
	status, msg, code := http.StatusBadRequest, "login_bad_request", "invalid_request"
	var rfc *fosite.RFC6749Error
	if errors.As(err, &rfc) {
		code = rfc.ErrorField
		if rfc.CodeField >= http.StatusInternalServerError {
			status, msg = http.StatusServiceUnavailable, "login_start_failed"
		}
	}
	switch {
	case errors.Is(err, fosite.ErrInvalidClient):
		msg = "login_unknown_client"
	case ar != nil && ar.GetClient() != nil && !ar.IsRedirectURIValid():
		msg = "login_bad_redirect"
	}
	p.render(w, r, status, "message", page{Title: "login_stopped_title", Error: msg, Detail: code})
}
