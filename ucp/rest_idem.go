package ucp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"shop"
	"shop/idempotency"
)

// maxKeptAnswer bounds an answer an Idempotency-Key keeps whole: an error
// response, which made and changed nothing and so has nothing to re-read.
// What made or changed a checkout or a cart is kept as its id alone, so
// that every key costs a small row whatever the size of the resource
// (docs/limits.md).
const maxKeptAnswer = 2 << 10

// restRecord is what an Idempotency-Key keeps of its answer: the status,
// and the id of the resource the call made or changed (re-read to answer a
// replay), or else the small answer itself. Status and body are named as
// they were when whole answers were kept, so that keys stored before are
// answered as they were.
type restRecord struct {
	Status int             `json:"status"`
	ID     string          `json:"id,omitempty"`
	Body   json.RawMessage `json:"body,omitempty"`
}

// restOnce makes run happen once per agent, operation and Idempotency-Key
// through the idempotency store shared by every replica: a retry with the
// same key and body (the same SHA-256 of the body's bytes, as signatures.md
// has it) answers the resource the first call made or changed as it stands
// (op.reread), the same key with another body is idempotency_conflict (409),
// one still running idempotency_in_flight (409), a store that fails
// storage_unavailable (503). Answers that may change on a retry (a checkout
// still being paid, a conflict, an error of the shop) are not kept.
func (u *UCP) restOnce(meta Meta, r *http.Request, sum [sha256.Size]byte, op restOp, run func(context.Context) (restAnswer, error)) func(context.Context) (restAnswer, error) {
	return func(ctx context.Context) (restAnswer, error) {
		fp := sha256.Sum256([]byte(r.Method + " " + r.URL.Path + " " + hex.EncodeToString(sum[:])))
		req := idempotency.Request{Scope: "ucp-rest|" + meta.Agent.Profile + "|" + r.Pattern, Key: meta.IdempotencyKey, Fingerprint: fp[:],
			Budget: budget(ctx), Network: network(ctx)}
		var ran *restAnswer
		stored, err := u.idem.Do(ctx, req, func(ctx context.Context) ([]byte, bool, error) {
			ans, err := run(ctx)
			if err != nil {
				return nil, false, err
			}
			ran = &ans
			rec, keep := ans.record(op.reread != nil)
			out, err := json.Marshal(rec)
			return out, keep, err
		})
		switch {
		case errors.Is(err, idempotency.ErrConflict):
			return restAnswer{}, protocolError(-32000, "Idempotency key reused with a different payload", "idempotency_conflict",
				"Idempotency-Key was used for another request; send a fresh UUID for a new one", nil)
		case errors.Is(err, idempotency.ErrInFlight):
			return restAnswer{}, protocolError(-32000, "Request in progress", "idempotency_in_flight",
				"the first request with this Idempotency-Key is still running; retry in a second", map[string]any{"retry_after": 1})
		case errors.Is(err, idempotency.ErrBudget):
			return restAnswer{}, overBudget(u.now())
		case err != nil && errors.Is(err, idempotency.ErrStore):
			u.logger.WarnContext(ctx, "ucp rest: idempotency store", "err", err)
			return restAnswer{}, protocolError(-32000, "Service unavailable", "storage_unavailable",
				"the shop could not record this Idempotency-Key; retry in a few seconds with the same key", nil)
		case err != nil:
			return restAnswer{}, err
		case ran != nil:
			return *ran, nil
		}
		return u.replay(ctx, meta, stored, op)
	}
}

// budget is who pays for a new idempotency key: the caller's address,
// since nobody vouches for a UCP agent (its profile is what it says).
func budget(ctx context.Context) string {
	if a := shop.BuyerFrom(ctx).Address; a != "" {
		return "address|" + a
	}
	return ""
}

// network is the second tier of budget: the IPv6 /48 of the caller's
// address, "" for an IPv4 address or none.
func network(ctx context.Context) string {
	if n := shop.BuyerFrom(ctx).Network(); n != "" {
		return "network|" + n
	}
	return ""
}

// overBudget is the refusal of a new key past the address's budget (429,
// docs/limits.md), to retry when the hour turns.
func overBudget(now time.Time) error {
	wait := int(now.Truncate(time.Hour).Add(time.Hour).Sub(now).Seconds()) + 1
	return protocolError(-32000, "Too many requests", "too_many_requests",
		fmt.Sprintf("this address has made %d state changes this hour, the most the shop keeps idempotency keys for; retry in %d seconds", idempotency.DefaultKeysPerHour, wait),
		map[string]any{"retry_after": wait})
}

// record is what a key keeps of an answer, and whether it keeps anything:
// the id of the checkout or cart it made or changed when that can be
// re-read, an error response whole when small; nothing when a retry might
// answer otherwise.
func (a restAnswer) record(rereadable bool) (restRecord, bool) {
	switch {
	case !a.final:
		return restRecord{}, false
	case a.id != "" && rereadable:
		return restRecord{Status: a.status, ID: a.id}, true
	case a.id == "" && len(a.body) <= maxKeptAnswer:
		return restRecord{Status: a.status, Body: a.body}, true
	}
	return restRecord{}, false
}

// replay answers a replayed key from its record: the resource re-read by
// the operation's get function, or the answer kept whole.
func (u *UCP) replay(ctx context.Context, meta Meta, stored []byte, op restOp) (restAnswer, error) {
	var rec restRecord
	if err := json.Unmarshal(stored, &rec); err != nil {
		return restAnswer{}, fmt.Errorf("stored answer: %w", err)
	}
	if rec.ID == "" {
		return restAnswer{status: rec.Status, body: rec.Body}, nil
	}
	meta.IdempotencyKey = ""
	o, err := op.reread(u, ctx, meta, rec.ID)
	if err != nil {
		return restAnswer{}, err
	}
	return op.answer(o, rec.Status) // gone since (swept): an error response, 200
}
