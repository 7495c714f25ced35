package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ory/fosite"
	"golang.org/x/net/publicsuffix"
	"golang.org/x/sync/singleflight"
	"gorm.io/gorm"

	"shop"
	"shop/webfetch"
)

// clients finds the OAuth clients: a client whose id is an https URL is
// described by the metadata document at that URL (Client ID Metadata
// Documents); any other was registered dynamically (RFC 7591) and is kept
// in oauth_clients.
type clients struct {
	db       *gorm.DB
	fetch    *webfetch.Fetcher
	audience string

	now    func() time.Time
	mu     sync.Mutex
	cache  map[string]cachedClient // by URL, and by "host " and a host name for a host's failure
	flight singleflight.Group      // the fetches under way, by URL
}

type cachedClient struct {
	client  *Client
	err     error
	expires time.Time
}

// Client is an OAuth client of the shop as the consent page names it.
type Client struct {
	fosite.DefaultClient
	// Name is its client_name ("ChatGPT") without control or bidirectional
	// characters; empty when it has none.
	Name string
	// SelfRegistered is true for a client that registered itself (RFC
	// 7591): nobody vouches for its name, not even a host serving it.
	SelfRegistered bool
}

// Host is the host the pages show beside the client's name for a request
// that redirects to redirect: the host of its metadata document (whose
// owner chose its redirect URIs), or else the host the code goes to.
func (c *Client) Host(redirect *url.URL) string {
	if !c.SelfRegistered {
		if u, err := url.Parse(c.ID); err == nil {
			return u.Hostname()
		}
	}
	if redirect == nil {
		return ""
	}
	return redirect.Hostname()
}

const (
	maxClientCache   = 1000
	failedClientTTL  = 30 * time.Second
	minClientTTL     = time.Minute
	maxClientTTL     = 24 * time.Hour
	maxRedirectURIs  = 10
	maxClientNameLen = 100
	maxURILen        = 2000
)

// errUnknownClient is fosite's answer to a client id that names no client.
var errUnknownClient = fosite.ErrInvalidClient.WithHint("The client is unknown, or its metadata document could not be fetched or read.")

// isMetadataURL reports whether id names a client by its metadata document.
func (c *clients) isMetadataURL(id string) bool {
	return strings.HasPrefix(id, "https://") || strings.HasPrefix(id, "http://")
}

// GetClient answers the client with id (fosite.ClientManager).
func (c *clients) GetClient(ctx context.Context, id string) (fosite.Client, error) {
	cl, err := c.get(ctx, id)
	if err != nil {
		return nil, err
	}
	return cl, nil
}

func (c *clients) get(ctx context.Context, id string) (*Client, error) {
	if len(id) == 0 || len(id) > maxURILen {
		return nil, errUnknownClient
	}
	if c.isMetadataURL(id) {
		return c.document(ctx, id)
	}
	var row clientRow
	err := c.db.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, errUnknownClient
	}
	if err != nil {
		return nil, fmt.Errorf("read client: %w", err)
	}
	var uris []string
	if err := json.Unmarshal([]byte(row.RedirectURIs), &uris); err != nil {
		return nil, fmt.Errorf("decode client: %w", err)
	}
	cl := c.client(row.ID, row.Name, uris)
	cl.SelfRegistered = true
	return cl, nil
}

func (c *clients) client(id, name string, redirects []string) *Client {
	return &Client{Name: cleanName(name), DefaultClient: fosite.DefaultClient{
		ID: id, RedirectURIs: redirects, Public: true,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		Scopes: shop.Scopes, Audience: []string{c.audience},
	}}
}

// cleanName is a client's name as the pages may show it: valid UTF-8
// without control characters (line breaks among them) or bidirectional
// ones (which could make "moc.tpgtahc" read as "chatgpt.com"), at most
// maxClientNameLen bytes of whole characters.
func cleanName(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(name, ""))
	name = strings.TrimSpace(name)
	for len(name) > maxClientNameLen {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}

// clientDocument is what the shop reads of a client's metadata document.
type clientDocument struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// document answers the client described at rawURL, fetched or from the
// cache: a document for as long as its headers allow, a failure for
// failedClientTTL, for the URL and, when the host itself failed
// (unreachable, slow, not public), for every URL of the host. Concurrent
// calls for one URL share one fetch. So naming failing documents cannot
// make the shop fetch them again and again (docs/limits.md).
func (c *clients) document(ctx context.Context, rawURL string) (*Client, error) {
	host := "host " + hostname(rawURL)
	if e, ok := c.cached(host); ok {
		return e.answer()
	}
	if e, ok := c.cached(rawURL); ok {
		return e.answer()
	}
	v, _, _ := c.flight.Do(rawURL, func() (any, error) {
		if e, ok := c.cached(rawURL); ok {
			return e, nil // fetched while this call waited
		}
		return c.load(ctx, rawURL, host), nil
	})
	return v.(cachedClient).answer()
}

// cached is the cache's entry for key while it lasts.
func (c *clients) cached(key string) (cachedClient, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.cache[key]
	return e, ok && c.now().Before(e.expires)
}

func (e cachedClient) answer() (*Client, error) {
	if e.err != nil {
		return nil, e.err
	}
	return e.client, nil
}

// load fetches and reads the document at rawURL and caches the outcome,
// unless the shop was too busy to ask or the caller gave up.
func (c *clients) load(ctx context.Context, rawURL, host string) cachedClient {
	cl, ttl, hostDown, err := c.fetchDocument(ctx, rawURL)
	now := c.now()
	e := cachedClient{client: cl, err: err, expires: now.Add(ttl)}
	if err != nil {
		e.expires = now.Add(failedClientTTL)
		if errors.Is(err, webfetch.ErrBusy) || ctx.Err() != nil {
			return e // nothing was learned of the document
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cache) >= maxClientCache-1 {
		clear(c.cache) // a cache, not a record: refetching is always right
	}
	c.cache[rawURL] = e
	if hostDown {
		c.cache[host] = e
	}
	return e
}

// fetchDocument fetches and reads the client metadata document at rawURL,
// answering the client and how long it may be kept, or why not and whether
// the host itself failed.
func (c *clients) fetchDocument(ctx context.Context, rawURL string) (*Client, time.Duration, bool, error) {
	resp, err := c.fetch.Get(ctx, rawURL, "application/json")
	if err != nil {
		hostDown := !errors.Is(err, webfetch.ErrBadURL) && !errors.Is(err, webfetch.ErrStatus) && !errors.Is(err, webfetch.ErrTooLarge)
		return nil, 0, hostDown, errUnknownClient.WithWrap(err).WithDebug(err.Error())
	}
	var doc clientDocument
	if err := json.Unmarshal(resp.Body, &doc); err != nil {
		return nil, 0, false, errUnknownClient.WithHint("The client's metadata document is not a JSON object.")
	}
	if doc.ClientID != rawURL {
		return nil, 0, false, errUnknownClient.WithHint("The client's metadata document names another client_id than its URL.")
	}
	if m := doc.TokenEndpointAuthMethod; m != "" && m != "none" {
		return nil, 0, false, errUnknownClient.WithHint("The shop's clients are public: token_endpoint_auth_method must be none.")
	}
	if err := checkRedirects(doc.RedirectURIs); err != nil {
		return nil, 0, false, errUnknownClient.WithHint(err.Error())
	}
	cl := c.client(rawURL, doc.ClientName, doc.RedirectURIs)
	return cl, min(max(resp.TTL, minClientTTL), maxClientTTL), false, nil
}

// hostname is the host of rawURL, "" when it has none.
func hostname(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// checkRedirects refuses redirect URIs the shop would not send a code to:
// none, too many, not absolute, with a fragment, or http on a host other
// than the loopback (a native client's).
func checkRedirects(uris []string) error {
	if len(uris) == 0 || len(uris) > maxRedirectURIs {
		return fmt.Errorf("redirect_uris must list 1 to %d URIs", maxRedirectURIs)
	}
	for _, raw := range uris {
		u, err := url.Parse(raw)
		if err != nil || len(raw) > maxURILen || !u.IsAbs() || u.Host == "" || u.Fragment != "" {
			return fmt.Errorf("redirect_uris: %q is not an absolute URL without a fragment", clip(raw, 100))
		}
		if u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname())) {
			return fmt.Errorf("redirect_uris: %q must be https (or http on localhost)", clip(raw, 100))
		}
	}
	return nil
}

// checkOneSite refuses a registration whose redirect URIs lead to more than
// one site (registrable domain, such as example.com for app.example.com),
// loopback addresses aside (a code sent there stays on the buyer's
// machine): the pages name the host of the one URI a request uses, and a
// client named "ChatGPT" with chatgpt.com's URI beside its own host would
// borrow chatgpt.com's name for links to the other.
func checkOneSite(uris []string) error {
	site := ""
	for _, raw := range uris {
		u, _ := url.Parse(raw) // checkRedirects parsed them all
		host := strings.ToLower(u.Hostname())
		if loopback(host) {
			continue
		}
		s, err := publicsuffix.EffectiveTLDPlusOne(host)
		if err != nil {
			s = host // an IP address, or a public suffix itself
		}
		if site != "" && s != site {
			return fmt.Errorf("redirect_uris lead to several sites (%s and %s): register one client per site", clip(site, 100), clip(s, 100))
		}
		site = s
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

type clientRow struct {
	ID           string `gorm:"primaryKey"`
	Name         string
	RedirectURIs string
	MetadataHash *string
	Address      string
	// Network is Address's IPv6 /48 (shop.NetworkOf), "" for IPv4: the
	// second tier of the registrations' budget.
	Network      string
	AuthorizedAt *time.Time
	CreatedAt    time.Time
}

func (clientRow) TableName() string { return "oauth_clients" }

// registration is an RFC 7591 registration request, as far as the shop reads it.
type registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
}

// register serves POST /oauth/register: dynamic client registration for
// clients that cannot host a metadata document. Every client is public
// (PKCE, no secret).
func (c *clients) register(w http.ResponseWriter, r *http.Request) {
	var reg registration
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<10))
	if err := dec.Decode(&reg); err != nil {
		registrationError(w, "invalid_client_metadata", "the body must be a JSON object of client metadata")
		return
	}
	if code, desc := reg.checkSize(); code != "" {
		registrationError(w, code, desc)
		return
	}
	if err := checkRedirects(reg.RedirectURIs); err != nil {
		registrationError(w, "invalid_redirect_uri", err.Error())
		return
	}
	if err := checkOneSite(reg.RedirectURIs); err != nil {
		registrationError(w, "invalid_redirect_uri", err.Error())
		return
	}
	if m := reg.TokenEndpointAuthMethod; m != "" && m != "none" {
		registrationError(w, "invalid_client_metadata", "token_endpoint_auth_method must be none: the shop's clients are public and use PKCE")
		return
	}
	for _, g := range reg.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			registrationError(w, "invalid_client_metadata", "grant_types may be authorization_code and refresh_token only")
			return
		}
	}
	reg.ClientName = cleanName(reg.ClientName) // as the pages show it, and as registrations are compared
	row, err := c.save(r.Context(), reg, address(r))
	var budget *budgetError
	if errors.As(err, &budget) {
		w.Header().Set("Retry-After", budget.retryAfter())
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "temporarily_unavailable",
			"error_description": fmt.Sprintf("at most %d clients are registered from one address an hour; register again later, or use a client metadata document", registrationsPerHour)})
		return
	}
	if err != nil {
		http.Error(w, "the registration could not be stored; try again", http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": row.ID, "client_id_issued_at": row.CreatedAt.Unix(), "client_name": row.Name,
		"redirect_uris": reg.RedirectURIs, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
		"scope": strings.Join(shop.Scopes, " "),
	})
}

func registrationError(w http.ResponseWriter, code, desc string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
