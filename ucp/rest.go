package ucp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"

	"shop"
)

// RESTPath is where UCP's REST binding (2026-08-25, rest.openapi.json) is
// mounted: its operations are RESTPath + the OpenAPI's paths
// (/ucp/v1/checkout-sessions, …), and the profile names it as the shopping
// service's rest endpoint.
const RESTPath = "/ucp/v1"

// maxRESTBody bounds a REST request's body, read before anything else is
// done with it (server.MaxMCPBodyBytes, the bound of the shop's HTTP
// server, is the same).
const maxRESTBody = 256 << 10

// restStatuses are the HTTP statuses of UCP's protocol errors by their code
// (overview.md, Error Codes); any other is 400.
var restStatuses = map[string]int{
	"invalid_profile_url":   http.StatusBadRequest,
	"profile_unreachable":   http.StatusFailedDependency,
	"profile_malformed":     http.StatusUnprocessableEntity,
	"version_unsupported":   http.StatusUnprocessableEntity,
	"idempotency_conflict":  http.StatusConflict,
	"idempotency_in_flight": http.StatusConflict,
	"too_many_requests":     http.StatusTooManyRequests,
	"signature_missing":     http.StatusUnauthorized,
	"signature_invalid":     http.StatusUnauthorized,
	"key_not_found":         http.StatusUnauthorized,
	"digest_mismatch":       http.StatusBadRequest,
	"algorithm_unsupported": http.StatusBadRequest,
	"storage_unavailable":   http.StatusServiceUnavailable,
	"request_too_large":     http.StatusBadRequest,
	"invalid_request":       http.StatusBadRequest,
}

// agentProfilePattern reads the profile of a UCP-Agent header, an RFC 8941
// dictionary: profile="https://…".
var agentProfilePattern = regexp.MustCompile(`(?:^|[,;\s])profile="([^"\\]*)"`)

// uuidHeader is the form of Request-Id and Idempotency-Key.
var uuidHeader = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// REST returns the handler of UCP's REST binding, to be mounted at
// RESTPath. Each operation calls the dialect's typed function of the same
// action, the one /ucp/mcp's tool calls, with the arguments the request
// carries: meta from the UCP-Agent and Idempotency-Key headers, the id
// from the path, the body as the checkout, cart or catalog (get_order's
// email from the query). A state change is done once per agent and
// Idempotency-Key (kept 24 hours, the same key with another body 409, a
// key that cannot be stored 503); business outcomes are HTTP 200 or 201
// with the UCP object or error response, protocol errors their status
// with {code, content}. Every call runs in the UCP channel.
func (u *UCP) REST() http.Handler {
	mux := http.NewServeMux()
	for pattern, op := range restOps {
		mux.Handle(pattern, u.restHandler(op))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeProtocolError(w, http.StatusNotFound, "not_found", "no such operation: see https://ucp.dev/2026-08-25/services/shopping/rest.openapi.json")
	})
	return http.StripPrefix(RESTPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Request-Id"); uuidHeader.MatchString(id) {
			w.Header().Set("Request-Id", id) // for the agent's tracing, on every answer
		}
		mux.ServeHTTP(w, r.WithContext(shop.WithChannel(r.Context(), shop.ChannelUCP)))
	}))
}

// restHandler serves one operation.
func (u *UCP) restHandler(op restOp) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		meta, status, code, msg := restMeta(r, op)
		if code != "" {
			writeProtocolError(w, status, code, msg)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRESTBody+1))
		if err != nil {
			writeProtocolError(w, http.StatusBadRequest, "invalid_request", "the request body could not be read: send it again")
			return
		}
		if len(body) > maxRESTBody {
			writeProtocolError(w, http.StatusRequestEntityTooLarge, "invalid_request", fmt.Sprintf("request body too large: at most %d bytes", maxRESTBody))
			return
		}
		sum := sha256.Sum256(body) // the one hash of the body: Content-Digest and the idempotency fingerprint
		if err := u.authenticate(r, meta, len(body) > 0, sum); err != nil {
			u.restError(w, r, err)
			return
		}
		in := restIn{meta: meta, id: r.PathValue("id"), query: r.URL.Query()}
		if op.member != "" {
			if in.body, err = restBody(op.member, body); err != nil {
				writeProtocolError(w, http.StatusBadRequest, "invalid_request", err.Error())
				return
			}
		}
		run := func(ctx context.Context) (restAnswer, error) { return u.restRun(ctx, op, in) }
		if op.changes {
			run = u.restOnce(meta, r, sum, op, run)
		}
		ans, err := run(r.Context())
		if err != nil {
			u.restError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ans.status)
		_, _ = w.Write(ans.body)
	})
}

// authenticate checks a request against the keys the agent's profile
// publishes (fetched as for every call, from the cache while it lasts):
// an agent that publishes keys must sign every request (signature_missing
// otherwise), and a signature must verify (signatures.md's errors); a
// profile that publishes none leaves a request unchecked. A profile that
// cannot be fetched is its protocol error.
func (u *UCP) authenticate(r *http.Request, meta Meta, hasBody bool, sum [sha256.Size]byte) error {
	agent, err := u.profiles.get(r.Context(), meta.Agent.Profile)
	if err != nil {
		return err
	}
	var e *sigError
	switch {
	case len(agent.Keys) == 0:
		return nil
	case !signed(r):
		e = &sigError{"signature_missing", "the agent's profile publishes keys[]: sign every request with one of them (RFC 9421: Signature-Input and Signature, with created, as docs/ucp.md says)"}
	default:
		e = verifyRequest(r, hasBody, sum, agent.Keys, u.now())
	}
	if e == nil {
		return nil
	}
	return protocolError(-32000, "Signature verification failed", e.code, e.content, nil)
}

// restMeta is the meta of a request's tool call, read from its headers, or
// the protocol error of a header missing or malformed.
func restMeta(r *http.Request, op restOp) (meta Meta, status int, code, msg string) {
	m := agentProfilePattern.FindStringSubmatch(r.Header.Get("UCP-Agent"))
	if m == nil {
		return meta, http.StatusBadRequest, "invalid_profile_url", `send the UCP-Agent header: profile="https://…/your-agent-profile.json"`
	}
	meta.Agent = &struct {
		Profile string `json:"profile" jsonschema:"URL of the agent's UCP profile."`
	}{Profile: m[1]}
	if id := r.Header.Get("Request-Id"); id != "" && !uuidHeader.MatchString(id) {
		return meta, http.StatusBadRequest, "invalid_request", "Request-Id must be a UUID"
	}
	if op.changes {
		key := r.Header.Get("Idempotency-Key")
		if !uuidHeader.MatchString(key) {
			return meta, http.StatusBadRequest, "invalid_request", "send an Idempotency-Key header, a fresh UUID (the same one on every retry), with every request that changes state"
		}
		meta.IdempotencyKey = key
	}
	return meta, 0, "", ""
}

// restBody is the body as the member of its function's arguments,
// {"checkout": body}, for the arguments' own decoding (an empty body is
// {}); a body that is not a JSON object is refused.
func restBody(member string, body []byte) ([]byte, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if !json.Valid(body) || bytes.TrimSpace(body)[0] != '{' {
		return nil, errors.New("the request body must be a JSON object: the " + member)
	}
	wrapped := make([]byte, 0, len(body)+len(member)+5)
	wrapped = append(append(append(wrapped, `{"`...), member...), `":`...)
	return append(append(wrapped, body...), '}'), nil
}

// restAnswer is an operation's answer as it is sent: its status and JSON,
// and the outcome they were made from.
type restAnswer struct {
	outcome
	status int
	body   []byte
}

// restRun runs the operation and answers its outcome.
func (u *UCP) restRun(ctx context.Context, op restOp, in restIn) (restAnswer, error) {
	o, err := op.run(u, ctx, in)
	if err != nil {
		return restAnswer{}, err
	}
	return op.answer(o, http.StatusCreated)
}

// answer is an outcome as it is sent: 200 with its value, or made (201 or
// the status kept for a replay) when the operation makes its resource and
// the outcome is not an error response.
func (op restOp) answer(o outcome, made int) (restAnswer, error) {
	b, err := json.Marshal(o.value)
	if err != nil {
		return restAnswer{}, err
	}
	status := http.StatusOK
	if op.created && !o.failed {
		status = made
	}
	return restAnswer{outcome: o, status: status, body: b}, nil
}

// restError answers an error of a tool call: a UCP protocol error with its
// status and {code, content}, a refused argument 400 naming its field, any
// other 500, logged.
func (u *UCP) restError(w http.ResponseWriter, r *http.Request, err error) {
	var pe *protoError
	var se *shop.Error
	switch {
	case errors.As(err, &pe):
		status, ok := restStatuses[pe.code]
		if !ok {
			status = http.StatusBadRequest
		}
		if pe.retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(pe.retryAfter))
		}
		writeProtocolError(w, status, pe.code, pe.content)
	case errors.As(err, &se):
		writeProtocolError(w, http.StatusBadRequest, string(se.Code), se.Error())
	default:
		u.logger.ErrorContext(r.Context(), "ucp rest", "path", r.URL.Path, "err", err)
		writeProtocolError(w, http.StatusInternalServerError, "internal_error", "the shop could not answer: retry later")
	}
}

// writeProtocolError answers a protocol error: its status and {code, content}.
func writeProtocolError(w http.ResponseWriter, status int, code, content string) {
	b, _ := json.Marshal(map[string]string{"code": code, "content": content})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
