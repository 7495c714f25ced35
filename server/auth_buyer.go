package server

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"shop"
	"shop/accounts"
)

// bearerAuth checks the bearer token of a request to /mcp (docs/accounts.md):
// none is a guest, as always; a valid one makes the request's
// shop.Buyer that account (with its email and scopes); any other (unknown,
// expired, revoked, for another resource, not a Bearer header) is answered
// 401 with the challenge that tells the host where to link the account.
func bearerAuth(as *accounts.Server, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := r.Header.Get("Authorization")
		if header == "" {
			next.ServeHTTP(w, r)
			return
		}
		scheme, token, _ := strings.Cut(header, " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			bearerRefused(w, as, "send the access token as Authorization: Bearer <token>")
			return
		}
		ctx := r.Context()
		linked, err := verifyOnce(ctx, as, strings.TrimSpace(token))
		if errors.Is(err, accounts.ErrInvalidToken) {
			bearerRefused(w, as, "the access token is invalid, expired, revoked or for another resource; link the account again")
			return
		}
		if err != nil {
			http.Error(w, "the shop could not check the access token; try again in a moment", http.StatusServiceUnavailable)
			return
		}
		b := shop.BuyerFrom(ctx)
		b.AccountID, b.AccountEmail, b.Scopes = linked.AccountID, linked.AccountEmail, linked.Scopes
		next.ServeHTTP(w, r.WithContext(shop.WithBuyer(ctx, b)))
	})
}

func bearerRefused(w http.ResponseWriter, as *accounts.Server, msg string) {
	w.Header().Set("WWW-Authenticate", as.Challenge("invalid_token", nil))
	http.Error(w, msg, http.StatusUnauthorized)
}

// checkedToken is a bearer token the rate limiter already checked (to key
// a linked buyer's bucket by account), so that bearerAuth answers from it
// instead of checking the token again.
type checkedToken struct {
	token string
	buyer shop.Buyer
	err   error
}

type checkedTokenKey struct{}

// verifyOnce checks token, or answers what the rate limiter found of it.
func verifyOnce(ctx context.Context, as *accounts.Server, token string) (shop.Buyer, error) {
	if c, ok := ctx.Value(checkedTokenKey{}).(checkedToken); ok && c.token == token {
		return c.buyer, c.err
	}
	return as.Verify(ctx, token)
}

// withAccount checks the bearer token of a request to /mcp, for the rate
// limiter: a valid one makes the request's buyer that account, so that a
// linked buyer's requests share one bucket whichever host, device or
// address sends them. The result is kept for bearerAuth, which answers an
// invalid token. It is one indexed lookup of the token's hash, after the
// address's own limit: no more than a made-up host user id already gets.
func withAccount(r *http.Request, as *accounts.Server) *http.Request {
	header := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(header, " ")
	token = strings.TrimSpace(token)
	if as == nil || r.URL.Path != "/mcp" || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return r
	}
	ctx := r.Context()
	linked, err := as.Verify(ctx, token)
	ctx = context.WithValue(ctx, checkedTokenKey{}, checkedToken{token: token, buyer: linked, err: err})
	if err == nil {
		b := shop.BuyerFrom(ctx)
		b.AccountID, b.AccountEmail, b.Scopes = linked.AccountID, linked.AccountEmail, linked.Scopes
		ctx = shop.WithBuyer(ctx, b)
	}
	return r.WithContext(ctx)
}
