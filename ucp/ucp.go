// Package ucp speaks the Universal Commerce Protocol over MCP, the dialect
// of Google's and Shopify's shopping agents, at /ucp/mcp: releases
// 2026-08-25 (Version) and 2026-04-08 (PreviousVersion), each call answered
// in the release of the agent's profile. It serves the shop's business
// profile at /.well-known/ucp (2026-08-25, its supported_versions naming
// /.well-known/ucp/2026-04-08), with the shop's signing key in keys[].
//
// It only translates: its tools turn UCP's requests into calls of
// checkout's, catalog's and orders' Go API, and their results into UCP's
// objects (checkout, cart, order, catalog products, messages). The
// sessions, their prices, holds and limits, the one charge and the order
// are the same whichever dialect made or paid them.
//
// Every call names the agent's profile in meta["ucp-agent"].profile; the
// shop fetches it (https only, bounded in time and size, never from a
// private or link-local address, kept for its TTL) and answers with the
// capabilities both declare. A profile that cannot be fetched or read, or
// a protocol version the shop does not speak, is a JSON-RPC error -32001 whose data carries
// the UCP code (profile_unreachable, profile_malformed, invalid_profile_url,
// version_unsupported), and the same idempotency key sent with another
// payload -32000 (idempotency_conflict); anything else the shop cannot do is a UCP answer
// with an error message (error_response.json), never an MCP tool error.
package ucp

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"shop"
	"shop/catalog"
	"shop/checkout"
	"shop/idempotency"
	"shop/orders"
	"shop/webfetch"
)

// Options configure the dialect.
type Options struct {
	Checkout *checkout.Checkout
	Catalog  *catalog.Catalog
	Orders   *orders.Orders
	// Idempotency keeps the agents' idempotency keys and answers.
	Idempotency *idempotency.Store
	// PublicURL is the shop's base URL: the MCP endpoint is PublicURL +
	// "/ucp/mcp".
	PublicURL string
	// Sandbox is true when payments go to the offline sandbox: the
	// profile then offers a test payment handler taking TestTokens.
	Sandbox    bool
	TestTokens []string
	// CardBrands are the card brands the payment provider takes.
	CardBrands []string
	// AllowLoopbackProfiles lets agent profiles be fetched over http from
	// loopback addresses: for tests on one machine only.
	AllowLoopbackProfiles bool
	// SigningKey is the shop's ECDSA P-256 signing key, whose public half
	// the profile publishes in keys[] (see orders.LoadSigningKey).
	SigningKey *ecdsa.PrivateKey
	Logger     *slog.Logger
	// ReturnPolicy is the return policy catalog, checkout and order
	// answers carry; none when its description is empty.
	ReturnPolicy ReturnPolicy
}

// UCP is the dialect: its tools and the business profile.
type UCP struct {
	checkout   *checkout.Checkout
	catalog    *catalog.Catalog
	orders     *orders.Orders
	idem       *idempotency.Store
	publicURL  string
	sandbox    bool
	testTokens []string
	cardBrands []string
	profiles   *profiles
	hooks      *webfetch.Fetcher
	signingKey *ecdsa.PrivateKey
	logger     *slog.Logger
	now        func() time.Time // the clock signatures' windows are read by
	returns    ReturnPolicy
}

// New returns the dialect.
func New(opts Options) *UCP {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &UCP{
		checkout: opts.Checkout, catalog: opts.Catalog, orders: opts.Orders, idem: opts.Idempotency,
		publicURL: strings.TrimRight(opts.PublicURL, "/"), sandbox: opts.Sandbox,
		testTokens: opts.TestTokens, cardBrands: opts.CardBrands,
		profiles: newProfiles(opts.AllowLoopbackProfiles), hooks: newWebhookFetcher(opts.AllowLoopbackProfiles), signingKey: opts.SigningKey, logger: logger,
		now: time.Now, returns: opts.ReturnPolicy,
	}
}

// protoError is a failure the specification answers as a protocol error
// rather than a result: over MCP the JSON-RPC error it unwraps to, over
// REST the HTTP status of its code with {code, content} (read with
// errors.As, never from the JSON-RPC error's data).
type protoError struct {
	rpc           *shop.ProtocolError
	code, content string
	retryAfter    int // seconds, 0 for none
}

// Error returns the JSON-RPC error's message.
func (e *protoError) Error() string { return e.rpc.Error() }

// Unwrap returns the JSON-RPC error, which /ucp/mcp answers.
func (e *protoError) Unwrap() error { return e.rpc }

// protocolError is a protocol error: JSON-RPC -32001 for discovery (the
// agent's profile), -32000 for the others, with UCP's error (code,
// content, extra) in data.
func protocolError(rpcCode int64, message, code, content string, extra map[string]any) *protoError {
	data := map[string]any{"code": code, "content": content}
	for k, v := range extra {
		data[k] = v
	}
	b, err := json.Marshal(data)
	if err != nil {
		panic(err) // strings and numbers only
	}
	retry, _ := extra["retry_after"].(int)
	return &protoError{rpc: &shop.ProtocolError{Code: rpcCode, Message: message + ": " + content, Data: b, Status: mcpStatuses[code]},
		code: code, content: content, retryAfter: retry}
}

// mcpStatuses are the HTTP statuses UCP gives protocol errors over MCP's
// streamable HTTP, by code (overview.md, Error Handling): its idempotency
// errors; the others, discovery's included, stay 200.
var mcpStatuses = map[string]int{
	"idempotency_conflict":  http.StatusConflict,
	"idempotency_in_flight": http.StatusConflict,
}

func discoveryError(code, content string) *protoError {
	return protocolError(-32001, "UCP discovery failed", code, content, nil)
}

// Meta is the meta argument of every tool.
type Meta struct {
	Agent *struct {
		Profile string `json:"profile" jsonschema:"URL of the agent's UCP profile."`
	} `json:"ucp-agent,omitempty" jsonschema:"The agent: its profile URL (required)."`
	IdempotencyKey string `json:"idempotency-key,omitempty" jsonschema:"A UUID that makes the call safe to retry (required on complete and cancel)."`
}

// call is a tool call after negotiation: the capabilities active for it.
type call struct {
	active  map[string]bool
	meta    Meta
	agent   string // the agent's profile URL
	version string // the release of the agent's profile: the answer's
	// webhookURL is the order capability's config.webhook_url in the
	// agent's profile (2026-08-25): where its orders' events go.
	webhookURL string
}

// begin negotiates a call of a tool of the root capability root: it fetches
// the agent's profile (a *ProtocolError when it cannot) and answers an
// *ErrorResponse when the agent does not declare root at Version.
func (u *UCP) begin(ctx context.Context, meta Meta, root string) (*call, *ErrorResponse, error) {
	profile := ""
	if meta.Agent != nil {
		profile = meta.Agent.Profile
	}
	agent, err := u.profiles.get(ctx, profile)
	if err != nil {
		return nil, nil, err
	}
	if !supported(agent.Version) {
		return nil, nil, protocolError(-32001, "Protocol version not supported", "version_unsupported",
			"UCP version "+agent.Version+" is not supported; this business implements "+Version+" and "+PreviousVersion+".", nil)
	}
	active := negotiate(agent, agent.Version)
	if !active[root] {
		return nil, u.errorResponse(agent.Version, u.publicURL, Message{Type: "error", Code: "capabilities_incompatible",
			Content: "The agent's profile does not declare " + root + " at version " + agent.Version + "; declare it to use this tool.", Severity: "unrecoverable"}), nil
	}
	c := &call{active: active, meta: meta, agent: profile, version: agent.Version}
	if active[CapOrder] && current(agent.Version) {
		for _, e := range agent.Capabilities[CapOrder] {
			if e.Version == agent.Version && e.Config != nil && c.webhookURL == "" {
				c.webhookURL = e.Config.WebhookURL
			}
		}
	}
	return c, nil, nil
}

// envelope is the ucp object of an answer of root's tools: the active
// capabilities that are root or extend it, and (for checkouts) the payment
// handlers.
func (u *UCP) envelope(c *call, root string) Envelope {
	e := Envelope{Version: c.version, Capabilities: map[string][]Entity{}}
	for _, cp := range capabilities {
		if !c.active[cp.name] {
			continue
		}
		if cp.name == root || contains(cp.extends, root) {
			e.Capabilities[cp.name] = []Entity{{Version: c.version}}
		}
	}
	if root == CapCheckout {
		e.PaymentHandlers = u.handlers(c.version)
	}
	return e
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// errorResponse is an answer in release version that made or found nothing.
func (u *UCP) errorResponse(version, continueURL string, msgs ...Message) *ErrorResponse {
	return &ErrorResponse{UCP: Envelope{Version: version, Status: "error"}, Messages: msgs, ContinueURL: continueURL}
}

// refusal turns an error of the shop's Go API into a UCP answer: a
// *shop.Error becomes an error message (its code, its field's path in UCP
// terms, its text); any other error is returned for the edge to log.
func (u *UCP) refusal(c *call, err error, paths func(string) string) (*ErrorResponse, error) {
	var e *shop.Error
	if !errors.As(err, &e) {
		return nil, err
	}
	severity := "recoverable" // the agent can fix the field, or retry a conflict
	if e.Code == shop.NotFound || e.Code == shop.Expired {
		severity = "unrecoverable"
	}
	path := ""
	if e.Param != "" && paths != nil {
		path = paths(e.Param)
	}
	return u.errorResponse(c.version, u.publicURL, Message{Type: "error", Code: string(e.Code), Path: path, Content: say(e.Message), Severity: severity}), nil
}
