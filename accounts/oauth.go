package accounts

import (
	"context"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"gorm.io/gorm"

	"shop"
	"shop/webfetch"
)

// The authorization server is github.com/ory/fosite: it speaks the protocol
// (authorization code with PKCE S256 only, refresh tokens rotated on use
// with a short grace and reuse detection, revocation, opaque HMAC tokens), and this package
// gives it storage in the shop's database (store), the clients (clients),
// the login and consent pages (login.go) and what fosite has no option for:
// the resource parameter (RFC 8707), iss in the authorization response
// (RFC 9207) and the metadata documents (RFC 8414, RFC 9728).

const (
	accessLifespan  = time.Hour
	codeLifespan    = 10 * time.Minute
	refreshLifespan = 30 * 24 * time.Hour
	// refreshGrace is how long a refresh token still refreshes after its
	// first use: long enough for a host's workers refreshing at once,
	// short enough that a stolen token's reuse soon revokes its family.
	refreshGrace = 30 * time.Second
)

// Options configure the authorization server.
type Options struct {
	// PublicURL is the shop's base URL ("https://shop.example"): the issuer,
	// and with "/mcp" the one resource its tokens are for.
	PublicURL string
	// Key is a secret of at least 32 bytes, the same on every replica and
	// across restarts (the receipt key): the tokens' HMAC key derives from it.
	Key []byte
	// Shop is the merchant's name, on the login pages and in the email.
	Shop string
	// Fetch fetches the clients' metadata documents: https only, public
	// addresses only (webfetch.Options.AllowLoopback in tests only),
	// bounded in size and time, with the TTL their headers allow.
	Fetch *webfetch.Fetcher
	// Logger receives the server's errors; codes and tokens are never logged.
	Logger *slog.Logger
	// Emails, when false, refuses logins up front: without an outbox
	// worker the code would never arrive (no SMTP configured).
	Emails bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Server is the buyers' authorization server: metadata, authorize, token,
// registration and revocation endpoints, the login and consent pages, and
// the check of the access tokens /mcp receives.
type Server struct {
	db       *gorm.DB
	opts     Options
	issuer   string
	resource string
	logger   *slog.Logger
	provider fosite.OAuth2Provider
	store    *store
	clients  *clients
	pages    *pages
	sealer   cipher.AEAD // seals authorization requests into the sign-in forms
	now      func() time.Time
}

// New returns the authorization server of the shop at opts.PublicURL.
func New(db *gorm.DB, opts Options) (*Server, error) {
	if len(opts.Key) < 32 {
		return nil, errors.New("accounts: the key must have at least 32 bytes")
	}
	if opts.Fetch == nil {
		return nil, errors.New("accounts: no fetcher for client metadata documents")
	}
	issuer := strings.TrimRight(opts.PublicURL, "/")
	s := &Server{db: db, opts: opts, issuer: issuer, resource: issuer + "/mcp", logger: opts.Logger, now: opts.Now}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.clients = &clients{db: db, fetch: opts.Fetch, audience: s.resource, cache: map[string]cachedClient{}, now: s.now}
	s.store = &store{db: db, clients: s.clients, now: s.now}
	mac := hmac.New(sha256.New, opts.Key)
	mac.Write([]byte("shop oauth tokens"))
	cfg := &fosite.Config{
		AccessTokenLifespan:      accessLifespan,
		AuthorizeCodeLifespan:    codeLifespan,
		RefreshTokenLifespan:     refreshLifespan,
		GlobalSecret:             mac.Sum(nil),
		EnforcePKCE:              true,
		ScopeStrategy:            fosite.ExactScopeStrategy,
		AudienceMatchingStrategy: fosite.ExactAudienceMatchingStrategy,
		RefreshTokenScopes:       []string{}, // every grant gets a refresh token, not only "offline" ones
		TokenURL:                 issuer + "/oauth/token",
		// state is the client's, echoed as sent whatever its length: PKCE
		// S256, which checkAuthorize requires, is what protects the redirect
		// (OAuth 2.1). 1 is fosite's least minimum (0 means its default, 8);
		// a request with no state at all is newAuthorizeRequest's.
		MinParameterEntropy: 1,
	}
	s.provider = compose.Compose(cfg, s.store, compose.NewOAuth2HMACStrategy(cfg),
		compose.OAuth2AuthorizeExplicitFactory,
		compose.OAuth2RefreshTokenGrantFactory,
		compose.OAuth2PKCEFactory,
		compose.OAuth2TokenRevocationFactory,
		compose.OAuth2TokenIntrospectionFactory,
	)
	var err error
	if s.sealer, err = newSealer(opts.Key); err != nil {
		return nil, err
	}
	if s.pages, err = newPages(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Issuer is the authorization server's issuer identifier.
func (s *Server) Issuer() string { return s.issuer }

// Resource is the URL of the one resource its tokens are for: the shop's /mcp.
func (s *Server) Resource() string { return s.resource }

// ResourceMetadataURL is the URL of the protected resource metadata of /mcp.
func (s *Server) ResourceMetadataURL() string {
	return s.issuer + "/.well-known/oauth-protected-resource/mcp"
}

// Handler serves the metadata, the OAuth endpoints and the login pages.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", s.resourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.resourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.serverMetadata)
	mux.HandleFunc("GET /oauth/authorize", s.pages.authorize)
	mux.HandleFunc("POST /oauth/token", s.token)
	mux.HandleFunc("POST /oauth/revoke", s.revoke)
	mux.HandleFunc("POST /oauth/register", s.clients.register)
	mux.HandleFunc("POST /login/email", s.pages.email)
	mux.HandleFunc("POST /login/code", s.pages.code)
	mux.HandleFunc("POST /login/consent", s.pages.consent)
	return mux
}

// Paths are the paths Handler serves, for the server's mux.
var Paths = []string{
	"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
	"/.well-known/oauth-authorization-server", "/oauth/", "/login/",
}

func (s *Server) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":                 s.resource,
		"authorization_servers":    []string{s.issuer},
		"scopes_supported":         shop.Scopes,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            s.opts.Shop,
	})
}

func (s *Server) serverMetadata(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         s.issuer,
		"authorization_endpoint":                         s.issuer + "/oauth/authorize",
		"token_endpoint":                                 s.issuer + "/oauth/token",
		"registration_endpoint":                          s.issuer + "/oauth/register",
		"revocation_endpoint":                            s.issuer + "/oauth/revoke",
		"scopes_supported":                               shop.Scopes,
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"revocation_endpoint_auth_methods_supported":     []string{"none"},
		"code_challenge_methods_supported":               []string{"S256"},
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
	})
}

// noState stands in for a state a request did not send, as fosite reads
// it: fosite v0.49 requires one, OAuth 2.1 with PKCE does not.
const noState = "shop-no-state"

// newAuthorizeRequest is fosite's reading of the authorization request r,
// which may send no state: fosite reads it with noState in its place,
// then the request is given back its own (none), so that nothing is
// echoed.
func (s *Server) newAuthorizeRequest(ctx context.Context, r *http.Request) (fosite.AuthorizeRequester, error) {
	q := r.URL.Query()
	if q.Get("state") != "" {
		return s.provider.NewAuthorizeRequest(ctx, r)
	}
	q.Set("state", noState)
	stand := r.Clone(ctx)
	stand.URL.RawQuery = q.Encode()
	ar, err := s.provider.NewAuthorizeRequest(ctx, stand)
	req, ok := ar.(*fosite.AuthorizeRequest)
	if !ok {
		return ar, errors.Join(err, errors.New("accounts: fosite's authorization request is not a *fosite.AuthorizeRequest"))
	}
	req.State = ""
	req.Form.Del("state")
	return req, err
}

// checkResource refuses a resource parameter (RFC 8707) that names anything
// but the shop's /mcp; none means /mcp.
func (s *Server) checkResource(values []string) error {
	for _, v := range values {
		if strings.TrimRight(v, "/") != s.resource {
			return fosite.ErrInvalidRequest.WithHintf("The resource must be %s: the shop's tokens are for its MCP endpoint only.", s.resource).
				WithWrap(errInvalidTarget)
		}
	}
	return nil
}

var errInvalidTarget = errors.New("invalid_target")

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	w.Header().Set("Access-Control-Allow-Origin", "*")
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		s.provider.WriteAccessError(ctx, w, fosite.NewAccessRequest(nil), fosite.ErrInvalidRequest.WithHint("The body must be a form."))
		return
	}
	ar, err := s.provider.NewAccessRequest(ctx, r, &fosite.DefaultSession{})
	if err == nil {
		err = s.checkResource(r.PostForm["resource"])
	}
	if err != nil {
		s.logRefusal(ctx, "token refused", err)
		s.provider.WriteAccessError(ctx, w, ar, err)
		return
	}
	resp, err := s.provider.NewAccessResponse(ctx, ar)
	if err != nil {
		s.logRefusal(ctx, "token refused", err)
		s.provider.WriteAccessError(ctx, w, ar, err)
		return
	}
	s.provider.WriteAccessResponse(ctx, w, ar, resp)
}

func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	w.Header().Set("Access-Control-Allow-Origin", "*")
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	err := s.provider.NewRevocationRequest(ctx, r)
	if err != nil {
		s.logRefusal(ctx, "revocation refused", err)
	}
	s.provider.WriteRevocationResponse(ctx, w, err)
}

// logRefusal logs why fosite refused a request: its error name and hint,
// never the request's codes or tokens.
func (s *Server) logRefusal(ctx context.Context, msg string, err error) {
	var rfc *fosite.RFC6749Error
	if errors.As(err, &rfc) {
		if rfc.CodeField >= 500 {
			s.logger.ErrorContext(ctx, msg, "error", rfc.ErrorField, "hint", rfc.HintField, "cause", rfc.Unwrap())
			return
		}
		s.logger.InfoContext(ctx, msg, "error", rfc.ErrorField, "hint", rfc.HintField)
		return
	}
	s.logger.ErrorContext(ctx, msg, "err", err)
}

// ErrInvalidToken is returned by Verify for a token the shop does not
// accept: unknown, expired, revoked, or for another resource.
var ErrInvalidToken = errors.New("accounts: invalid access token")

// Verify checks an access token /mcp received and answers the buyer it
// names: the account, its email and the granted scopes.
func (s *Server) Verify(ctx context.Context, token string) (shop.Buyer, error) {
	sess := &fosite.DefaultSession{}
	use, ar, err := s.provider.IntrospectToken(ctx, token, fosite.AccessToken, sess)
	if err == nil && use != fosite.AccessToken {
		// fosite's introspection answers refresh tokens too (the type is a
		// hint): a 30-day refresh token is no bearer token.
		return shop.Buyer{}, ErrInvalidToken
	}
	if err != nil {
		var rfc *fosite.RFC6749Error
		if errors.As(err, &rfc) && rfc.CodeField >= 500 {
			return shop.Buyer{}, fmt.Errorf("verify token: %w", err)
		}
		return shop.Buyer{}, ErrInvalidToken
	}
	if !ar.GetGrantedAudience().Has(s.resource) {
		return shop.Buyer{}, ErrInvalidToken
	}
	acct, err := Get(ctx, s.db, sess.Subject)
	if errors.Is(err, ErrNotFound) {
		return shop.Buyer{}, ErrInvalidToken
	}
	if err != nil {
		return shop.Buyer{}, err
	}
	return shop.Buyer{AccountID: acct.ID, AccountEmail: acct.Email, Scopes: ar.GetGrantedScopes()}, nil
}

// Challenge is the WWW-Authenticate challenge that asks a host to link the
// buyer's account for scopes (all of them when none), naming the protected
// resource metadata to start from; errCode is "invalid_token" for a token
// refused, "insufficient_scope" for a tool that needs a link or a scope.
func (s *Server) Challenge(errCode string, scopes []string) string {
	if len(scopes) == 0 {
		scopes = shop.Scopes
	}
	c := fmt.Sprintf(`Bearer resource_metadata=%q, scope=%q`, s.ResourceMetadataURL(), strings.Join(scopes, " "))
	if errCode != "" {
		c += fmt.Sprintf(`, error=%q`, errCode)
	}
	return c
}
