package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"shop"
	"shop/idempotency"
)

// envelope is a call's arguments: {meta, id, payload}.
type envelope struct {
	Meta    meta
	ID      string
	Payload json.RawMessage // nil when absent
}

// meta are the protocol fields the shop reads (the binding's meta object
// is extensible: other fields are ignored).
type meta struct {
	APIVersion     string `json:"api_version"`
	IdempotencyKey string `json:"idempotency_key"`
}

// stringMeta are the meta fields the binding types as strings.
var stringMeta = []string{"api_version", "idempotency_key", "request_id", "user_agent", "accept_language", "signature", "timestamp"}

// parse reads the envelope of a call of sp: a malformed one is -32602, a
// missing or unknown api_version the ACP error the binding names.
func (sp *spec) parse(raw json.RawMessage) (*envelope, error) {
	var args map[string]json.RawMessage
	if err := json.Unmarshal(orEmpty(raw), &args); err != nil || args == nil {
		return nil, malformed("the arguments must be an object {meta, id, payload}")
	}
	e := &envelope{}
	m, err := sp.parseMeta(args["meta"])
	if err != nil {
		return nil, err
	}
	e.Meta = *m
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case k == "meta":
		case k == "id" && sp.needsID:
		case k == "payload" && sp.payload != "":
		default:
			return nil, malformed("%s takes no argument %q; send %s", sp.name, k, sp.shape())
		}
	}
	if sp.needsID {
		if err := json.Unmarshal(orNull(args["id"]), &e.ID); err != nil || e.ID == "" {
			return nil, malformed("%s needs id, the checkout session's id as a string; send %s", sp.name, sp.shape())
		}
		if len(e.ID) > MaxIDLen {
			return nil, invalid("invalid", "$.id", "must be at most %d characters: send the checkout session's id (cs_…)", MaxIDLen).rpc(nil)
		}
	}
	if p := bytes.TrimSpace(args["payload"]); len(p) > 0 && !bytes.Equal(p, []byte("null")) {
		if p[0] != '{' {
			return nil, malformed("payload must be an object; send %s", sp.shape())
		}
		e.Payload = p
	} else if sp.payloadRequired {
		return nil, malformed("%s needs payload, an object; send %s", sp.name, sp.shape())
	}
	return e, nil
}

func (sp *spec) parseMeta(raw json.RawMessage) (*meta, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(orNull(raw), &fields); err != nil || fields == nil {
		return nil, malformed(`meta is required: an object such as {"api_version": %q}`, Version)
	}
	if _, ok := fields["api_version"]; !ok {
		return nil, (&Error{Type: InvalidRequest, Code: "missing_api_version", Param: "$.meta.api_version",
			Message: fmt.Sprintf("meta.api_version is required; this shop speaks %q", Version), SupportedVersions: agentVersions()}).rpc(nil)
	}
	for _, k := range stringMeta {
		if v, ok := fields[k]; ok {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, malformed("meta.%s must be a string", k)
			}
		}
	}
	var m meta
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, malformed("meta: %v", err)
	}
	supported := false
	for _, v := range SupportedVersions {
		supported = supported || v == m.APIVersion
	}
	if !supported {
		return nil, (&Error{Type: InvalidRequest, Code: "unsupported_api_version", Param: "$.meta.api_version",
			Message: fmt.Sprintf("API version %q is not supported; send %q", m.APIVersion, Version), SupportedVersions: agentVersions()}).rpc(nil)
	}
	return &m, nil
}

// shape is how the tool's arguments look, for messages.
func (sp *spec) shape() string {
	s := `{"meta": {"api_version": "` + Version + `"}`
	if sp.needsID {
		s += `, "id": "cs_…"`
	}
	switch {
	case sp.payloadRequired:
		s += `, "payload": {…}`
	case sp.payload != "":
		s += `, "payload"?: {…}`
	}
	return s + "}"
}

// answer is a call's answer: the session, or the ACP error.
type answer struct {
	session *Session
	err     *Error
}

// answerJSON is what an idempotency key kept before keys kept ids: the
// session and its text, or the ACP error; read to answer such keys.
type answerJSON struct {
	Session json.RawMessage `json:"session,omitempty"`
	Text    string          `json:"text,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// call runs one tool call: the envelope, the payload against its schema,
// then the tool, once per idempotency key.
func (a *ACP) call(ctx context.Context, sp *spec, raw json.RawMessage) (*shop.Result, error) {
	if err := a.verify(shop.AgentFrom(ctx), sp.name, orEmpty(raw)); err != nil {
		return nil, err
	}
	e, err := sp.parse(raw)
	if err != nil {
		return nil, err
	}
	if sp.keyed && e.Meta.IdempotencyKey == "" && a.keys[shop.AgentFrom(ctx)] != nil {
		// A signed call is good for MaxSkew: without a key, whoever holds
		// it could replay it that long, each time anew.
		return nil, invalid("idempotency_key_required", "$.meta.idempotency_key",
			"this agent signs its calls: a signed call that changes state needs meta.idempotency_key (a fresh UUID, the same on every retry), so that a replay of it is answered, not run again").rpc(nil)
	}
	if e.Payload != nil {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(e.Payload))
		if err != nil {
			return nil, malformed("payload is not valid JSON")
		}
		if bad := sp.check.check(doc, "$.payload"); bad != nil {
			return nil, bad.rpc(nil)
		}
	}
	if key := e.Meta.IdempotencyKey; sp.keyed && key != "" {
		return a.once(ctx, sp, e, key)
	}
	ans, _, cause := attempt(ctx, sp, e)
	return ans.result(cause)
}

// attempt runs the tool: its answer, whether an idempotency key keeps it,
// and the cause of an error, to log.
func attempt(ctx context.Context, sp *spec, e *envelope) (ans answer, keep bool, cause error) {
	s, bad, err := sp.run(ctx, e)
	cause = err
	if err != nil && bad == nil {
		bad, cause = fromShop(err)
	}
	if bad == nil && s == nil {
		bad, cause = &Error{Type: ProcessingError, Code: "internal_error", Message: internalMessage}, errors.New(sp.name+": no session and no error")
	}
	if bad != nil {
		return answer{err: bad}, bad.stored(), cause
	}
	return answer{session: s}, true, nil
}

// once runs the call at most once per idempotency key (package
// idempotency): a replay answers the session the first call made or
// changed as it stands now, or the first call's error again. The key keeps
// the session's id, not the session (docs/limits.md).
func (a *ACP) once(ctx context.Context, sp *spec, e *envelope, key string) (*shop.Result, error) {
	if len(key) > idempotency.MaxKeyLen {
		return nil, invalid("invalid", "$.meta.idempotency_key", "at most %d characters", idempotency.MaxKeyLen).rpc(nil)
	}
	fp, err := idempotency.Fingerprint(orNull(e.Payload))
	if err != nil {
		return nil, malformed("payload is not valid JSON")
	}
	var cause error
	var ran *answer
	req := idempotency.Request{Scope: scope(ctx, sp.name, e.ID), Key: key, Fingerprint: fp}
	if shop.AgentFrom(ctx) == anonymous { // an agent with a token is vouched for by the merchant
		req.Budget = "address|" + shop.BuyerFrom(ctx).Address
		if n := shop.BuyerFrom(ctx).Network(); n != "" {
			req.Network = "network|" + n // the /48's second tier
		}
	}
	stored, err := a.store.Do(ctx, req, func(ctx context.Context) ([]byte, bool, error) {
		ans, keep, why := attempt(ctx, sp, e)
		cause, ran = why, &ans
		b, err := json.Marshal(kept(ans))
		return b, keep, err
	})
	switch {
	case errors.Is(err, idempotency.ErrConflict):
		return nil, invalid("idempotency_conflict", "$.meta.idempotency_key",
			"Idempotency-Key has already been used with a different request body; use a new key for a new request").rpc(nil)
	case errors.Is(err, idempotency.ErrInFlight):
		return nil, invalid("idempotency_in_flight", "$.meta.idempotency_key",
			"A request with this Idempotency-Key is currently being processed; retry in a second").rpc(nil)
	case errors.Is(err, idempotency.ErrBudget):
		return nil, (&Error{Type: ServiceUnavailable, Code: "rate_limited",
			Message: fmt.Sprintf("this address has made %d state changes this hour, the most the shop keeps idempotency keys for; retry after the hour turns", idempotency.DefaultKeysPerHour)}).rpc(nil)
	case err != nil:
		e, cause := fromShop(err)
		return nil, e.rpc(cause)
	case ran != nil:
		return ran.result(cause)
	}
	var k keptJSON
	if err := json.Unmarshal(stored, &k); err != nil {
		return nil, (&Error{Type: ProcessingError, Code: "internal_error", Message: internalMessage}).rpc(fmt.Errorf("stored answer: %w", err))
	}
	if k.Error != nil {
		return nil, k.Error.rpc(nil)
	}
	if k.Ref == "" { // kept whole, before keys kept ids
		var ans answerJSON
		if err := json.Unmarshal(stored, &ans); err != nil {
			return nil, (&Error{Type: ProcessingError, Code: "internal_error", Message: internalMessage}).rpc(fmt.Errorf("stored answer: %w", err))
		}
		return ans.result(nil)
	}
	cs, err := a.checkout.Get(ctx, k.Ref)
	if err != nil {
		_, bad, cause := a.answer(nil, err)
		return nil, bad.rpc(cause)
	}
	var offered *Interventions
	if k.Offered {
		offered = noInterventions()
	}
	s := a.session(cs, offered)
	return &shop.Result{Structured: s, Text: summary(s)}, nil
}

// keptJSON is what an idempotency key keeps of an answer: the id of the
// session it made or changed (and whether it answered interventions), or
// its ACP error.
type keptJSON struct {
	Ref     string `json:"ref,omitempty"`
	Offered bool   `json:"offered,omitempty"`
	Error   *Error `json:"error,omitempty"`
}

// kept is what a key keeps of ans, read from the typed session.
func kept(ans answer) keptJSON {
	if ans.err != nil {
		return keptJSON{Error: ans.err}
	}
	return keptJSON{Ref: ans.session.ID, Offered: ans.session.Capabilities.Interventions != nil}
}

// result is ans as the tool's result or error.
func (ans answer) result(cause error) (*shop.Result, error) {
	if ans.err != nil {
		return nil, ans.err.rpc(cause)
	}
	return &shop.Result{Structured: ans.session, Text: summary(ans.session)}, nil
}

// result is a kept answer as the tool's result or error.
func (ans answerJSON) result(cause error) (*shop.Result, error) {
	if ans.Error != nil {
		return nil, ans.Error.rpc(cause)
	}
	return &shop.Result{Structured: ans.Session, Text: ans.Text}, nil
}

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(b)) == 0 {
		return json.RawMessage("{}")
	}
	return b
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(b)) == 0 {
		return json.RawMessage("null")
	}
	return b
}
