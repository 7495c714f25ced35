package server

import (
	"errors"
	"net/http"
	"strings"

	"shop"
	"shop/accounts"
)

// bearerAuth checks the bearer token of a request to /mcp (CONTRACT.md
// §10): none is a guest, as always; a valid one makes the request's
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
		linked, err := as.Verify(ctx, strings.TrimSpace(token))
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
