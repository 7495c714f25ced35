package accounts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ory/fosite"
	"gorm.io/gorm"

	"shop/notify"
)

// store keeps fosite's grants (codes, tokens, PKCE challenges) in the
// oauth_grants table, one row each, keyed by the SHA-256 of the token's
// signature, so that the database never holds a usable token. A code is
// single use through a conditional UPDATE, so replicas agree on who used it
// first; a refresh token is usable for refreshGrace from its first use
// (RotateRefreshToken), then it is a reuse.
type store struct {
	db      *gorm.DB
	clients *clients
	now     func() time.Time
}

// The kinds of grant.
const (
	kindCode    = "code"
	kindAccess  = "access"
	kindRefresh = "refresh"
	kindPKCE    = "pkce"
)

// tokenType is the fosite token type whose expiry a grant of kind carries.
var tokenType = map[string]fosite.TokenType{
	kindCode: fosite.AuthorizeCode, kindAccess: fosite.AccessToken,
	kindRefresh: fosite.RefreshToken, kindPKCE: fosite.AuthorizeCode,
}

type grantRow struct {
	SignatureHash string `gorm:"primaryKey"`
	Kind          string
	RequestID     string
	ClientID      string
	AccountID     string
	Scopes        string
	Audience      string
	Form          string
	RequestedAt   time.Time
	ExpiresAt     time.Time
	Active        bool
	RotatedAt     *time.Time
	CreatedAt     time.Time
}

func (grantRow) TableName() string { return "oauth_grants" }

// hash is the hex SHA-256 of s: how signatures, codes and cookies are kept.
func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// secretParams are the form values never stored with a grant.
var secretParams = map[string]bool{"code": true, "code_verifier": true, "refresh_token": true, "client_secret": true, "token": true}

func (s *store) create(ctx context.Context, kind, signature string, req fosite.Requester) error {
	form := url.Values{}
	for k, v := range req.GetRequestForm() {
		if !secretParams[k] {
			form[k] = v
		}
	}
	formJSON, err := json.Marshal(form)
	if err != nil {
		return fmt.Errorf("encode grant form: %w", err)
	}
	sess := req.GetSession()
	exp := sess.GetExpiresAt(tokenType[kind])
	if exp.IsZero() {
		exp = s.now().Add(refreshLifespan)
	}
	row := grantRow{
		SignatureHash: grantKey(kind, signature), Kind: kind, RequestID: req.GetID(), ClientID: req.GetClient().GetID(),
		AccountID: sess.GetSubject(), Scopes: strings.Join(req.GetGrantedScopes(), " "),
		Audience: strings.Join(req.GetGrantedAudience(), " "), Form: string(formJSON),
		RequestedAt: req.GetRequestedAt().UTC(), ExpiresAt: exp.UTC(), Active: true, CreatedAt: s.now().UTC(),
	}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("store %s grant: %w", kind, err)
	}
	if kind == kindCode {
		return s.clients.authorized(ctx, row.ClientID, row.CreatedAt)
	}
	return nil
}

// get reads the grant of kind with signature into a fosite request whose
// session is sess. An inactive grant is answered with the request and
// inactive (fosite revokes the family of a code or refresh token used twice).
func (s *store) get(ctx context.Context, kind, signature string, sess fosite.Session, inactive error) (fosite.Requester, error) {
	var row grantRow
	err := s.db.WithContext(ctx).Where("signature_hash = ? AND kind = ?", grantKey(kind, signature), kind).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, fosite.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read %s grant: %w", kind, err)
	}
	// An access token is checked on every call to /mcp: it needs its
	// client's id only, not its document fetched again or its row read.
	var client fosite.Client = s.clients.client(row.ClientID, "", nil)
	if kind != kindAccess {
		if client, err = s.clients.GetClient(ctx, row.ClientID); err != nil {
			return nil, err
		}
	}
	var form url.Values
	if err := json.Unmarshal([]byte(row.Form), &form); err != nil {
		return nil, fmt.Errorf("decode grant form: %w", err)
	}
	if ds, ok := sess.(*fosite.DefaultSession); ok {
		ds.Subject = row.AccountID
		ds.SetExpiresAt(tokenType[kind], row.ExpiresAt)
	}
	req := &fosite.Request{
		ID: row.RequestID, RequestedAt: row.RequestedAt, Client: client, Form: form, Session: sess,
		RequestedScope: fields(row.Scopes), GrantedScope: fields(row.Scopes),
		RequestedAudience: fields(row.Audience), GrantedAudience: fields(row.Audience),
	}
	if !row.Active || (row.RotatedAt != nil && !s.now().Before(row.RotatedAt.Add(refreshGrace))) {
		return req, inactive
	}
	return req, nil
}

// grantKey is the key of a grant: the hash of its kind and signature (a
// code's PKCE challenge is stored under the code's signature too).
func grantKey(kind, signature string) string { return hash(kind + ":" + signature) }

func fields(s string) []string { return strings.Fields(s) }

// deactivate marks the active grant of kind with signature used; a grant
// already used (by a concurrent caller too) is answered with used.
func (s *store) deactivate(ctx context.Context, kind, signature string, used error) error {
	res := s.db.WithContext(ctx).Model(&grantRow{}).
		Where("signature_hash = ? AND kind = ? AND active", grantKey(kind, signature), kind).Update("active", false)
	if res.Error != nil {
		return fmt.Errorf("use %s grant: %w", kind, res.Error)
	}
	if res.RowsAffected == 0 {
		return used
	}
	return nil
}

func (s *store) delete(ctx context.Context, kind, signature string) error {
	err := s.db.WithContext(ctx).Where("signature_hash = ? AND kind = ?", grantKey(kind, signature), kind).Delete(&grantRow{}).Error
	if err != nil {
		return fmt.Errorf("delete %s grant: %w", kind, err)
	}
	return nil
}

// revokeFamily deactivates every grant of kind issued from the request id.
func (s *store) revokeFamily(ctx context.Context, kind, requestID string) error {
	err := s.db.WithContext(ctx).Model(&grantRow{}).Where("request_id = ? AND kind = ?", requestID, kind).Update("active", false).Error
	if err != nil {
		return fmt.Errorf("revoke %s grants: %w", kind, err)
	}
	return nil
}

// GetClient is the clients' (fosite.ClientManager).
func (s *store) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	return s.clients.GetClient(ctx, id)
}

// ClientAssertionJWTValid: the shop's clients are public; no JWT assertions.
func (s *store) ClientAssertionJWTValid(context.Context, string) error { return nil }

// SetClientAssertionJWT: the shop's clients are public; no JWT assertions.
func (s *store) SetClientAssertionJWT(context.Context, string, time.Time) error { return nil }

func (s *store) CreateAuthorizeCodeSession(ctx context.Context, code string, req fosite.Requester) error {
	return s.create(ctx, kindCode, code, req)
}

func (s *store) GetAuthorizeCodeSession(ctx context.Context, code string, sess fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindCode, code, sess, fosite.ErrInvalidatedAuthorizeCode)
}

func (s *store) InvalidateAuthorizeCodeSession(ctx context.Context, code string) error {
	return s.deactivate(ctx, kindCode, code, fosite.ErrInvalidatedAuthorizeCode)
}

func (s *store) CreateAccessTokenSession(ctx context.Context, sig string, req fosite.Requester) error {
	return s.create(ctx, kindAccess, sig, req)
}

func (s *store) GetAccessTokenSession(ctx context.Context, sig string, sess fosite.Session) (fosite.Requester, error) {
	req, err := s.get(ctx, kindAccess, sig, sess, fosite.ErrInactiveToken)
	if errors.Is(err, fosite.ErrInactiveToken) {
		return nil, fosite.ErrNotFound // a revoked access token is no token
	}
	return req, err
}

func (s *store) DeleteAccessTokenSession(ctx context.Context, sig string) error {
	return s.delete(ctx, kindAccess, sig)
}

func (s *store) CreateRefreshTokenSession(ctx context.Context, sig, _ string, req fosite.Requester) error {
	return s.create(ctx, kindRefresh, sig, req)
}

func (s *store) GetRefreshTokenSession(ctx context.Context, sig string, sess fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindRefresh, sig, sess, fosite.ErrInactiveToken)
}

func (s *store) DeleteRefreshTokenSession(ctx context.Context, sig string) error {
	return s.delete(ctx, kindRefresh, sig)
}

// RotateRefreshToken is fosite's hook for rotating a refresh token as it
// is exchanged for a new one (fosite v0.49 leaves any grace to the
// storage): the first exchange starts the token's grace, and exchanges
// within it succeed too, so that two workers of one host refreshing at
// once both get tokens. After the grace, get finds the token inactive and
// fosite revokes its family as a reuse.
func (s *store) RotateRefreshToken(ctx context.Context, _ string, sig string) error {
	now := s.now().UTC()
	res := s.db.WithContext(ctx).Model(&grantRow{}).
		Where("signature_hash = ? AND kind = ? AND active AND (rotated_at IS NULL OR rotated_at > ?)", grantKey(kindRefresh, sig), kindRefresh, now.Add(-refreshGrace)).
		Update("rotated_at", gorm.Expr("COALESCE(rotated_at, ?)", now))
	if res.Error != nil {
		return fmt.Errorf("rotate refresh grant: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return fosite.ErrInactiveToken
	}
	return nil
}

func (s *store) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.revokeFamily(ctx, kindRefresh, requestID)
}

func (s *store) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.revokeFamily(ctx, kindAccess, requestID)
}

func (s *store) CreatePKCERequestSession(ctx context.Context, sig string, req fosite.Requester) error {
	return s.create(ctx, kindPKCE, sig, req)
}

func (s *store) GetPKCERequestSession(ctx context.Context, sig string, sess fosite.Session) (fosite.Requester, error) {
	return s.get(ctx, kindPKCE, sig, sess, fosite.ErrNotFound)
}

func (s *store) DeletePKCERequestSession(ctx context.Context, sig string) error {
	return s.delete(ctx, kindPKCE, sig)
}

// Sweep deletes what can no longer be used: login flows past their expiry,
// grants past theirs (a used refresh token stays until then, so that its
// reuse is still caught), the emails of expired sign-in codes and the
// registered clients that never got an authorization within a day. It
// answers how many rows went.
func Sweep(ctx context.Context, db *gorm.DB, now time.Time) (int64, error) {
	flows := db.WithContext(ctx).Where("expires_at < ?", now.UTC()).Delete(&flowRow{})
	if flows.Error != nil {
		return 0, fmt.Errorf("sweep login flows: %w", flows.Error)
	}
	grants := db.WithContext(ctx).Where("expires_at < ?", now.UTC()).Delete(&grantRow{})
	if grants.Error != nil {
		return flows.RowsAffected, fmt.Errorf("sweep grants: %w", grants.Error)
	}
	// A sign-in code's email holds the code itself: it goes when the code
	// expires, as the flow's hash of it does.
	swept := flows.RowsAffected + grants.RowsAffected
	codes, err := notify.Forget(ctx, db, codeEmailKind, now.Add(-loginCodeLife))
	if err != nil {
		return swept, err
	}
	clients, err := sweepUnusedClients(ctx, db, now)
	return swept + codes + clients, err
}
