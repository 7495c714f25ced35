package ucp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
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

// rereadTool is the tool that reads what tool makes or changes:
// get_checkout for the checkout's operations, get_cart for the cart's.
func rereadTool(tool string) string {
	_, noun, _ := strings.Cut(tool, "_")
	return "get_" + noun
}

// restOnce makes run happen once per agent, operation and Idempotency-Key
// through the idempotency store shared by every replica: a retry with the
// same key and body (the same SHA-256 of the body's bytes, as signatures.md
// has it) answers the resource the first call made or changed as it stands
// (reread), the same key with another body is idempotency_conflict (409),
// one still running idempotency_in_flight (409), a store that fails
// storage_unavailable (503). Answers that may change on a retry (a checkout
// still being paid, a conflict, an error of the shop) are not kept.
func (u *UCP) restOnce(meta Meta, r *http.Request, sum [sha256.Size]byte, reread shop.Tool, run func(context.Context) (int, []byte, error)) func(context.Context) (int, []byte, error) {
	return func(ctx context.Context) (int, []byte, error) {
		fp := sha256.Sum256([]byte(r.Method + " " + r.URL.Path + " " + hex.EncodeToString(sum[:])))
		req := idempotency.Request{Scope: "ucp-rest|" + meta.Agent.Profile + "|" + r.Pattern, Key: meta.IdempotencyKey, Fingerprint: fp[:],
			Budget: budget(ctx), Network: network(ctx)}
		var ran []byte
		var ranStatus int
		stored, err := u.idem.Do(ctx, req, func(ctx context.Context) ([]byte, bool, error) {
			status, b, err := run(ctx)
			if err != nil {
				return nil, false, err
			}
			ranStatus, ran = status, b
			rec, keep := record(status, b, reread.Handle != nil)
			out, err := json.Marshal(rec)
			return out, keep, err
		})
		switch {
		case errors.Is(err, idempotency.ErrConflict):
			return 0, nil, protocolError(-32000, "Idempotency key reused with a different payload", "idempotency_conflict",
				"Idempotency-Key was used for another request; send a fresh UUID for a new one", nil)
		case errors.Is(err, idempotency.ErrInFlight):
			return 0, nil, protocolError(-32000, "Request in progress", "idempotency_in_flight",
				"the first request with this Idempotency-Key is still running; retry in a second", map[string]any{"retry_after": 1})
		case errors.Is(err, idempotency.ErrBudget):
			return 0, nil, overBudget(u.now())
		case err != nil && errors.Is(err, idempotency.ErrStore):
			u.logger.WarnContext(ctx, "ucp rest: idempotency store", "err", err)
			return 0, nil, protocolError(-32000, "Service unavailable", "storage_unavailable",
				"the shop could not record this Idempotency-Key; retry in a few seconds with the same key", nil)
		case err != nil:
			return 0, nil, err
		case ran != nil:
			return ranStatus, ran, nil
		}
		return u.replay(ctx, meta, stored, reread)
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

// record is what a key keeps of answer b (status status), and whether it
// keeps anything: the id of a checkout or cart when it can be re-read, an
// error response whole when small.
func record(status int, b []byte, rereadable bool) (restRecord, bool) {
	if !keepable(b) {
		return restRecord{}, false
	}
	var probe struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(b, &probe)
	switch {
	case probe.ID != "" && rereadable:
		return restRecord{Status: status, ID: probe.ID}, true
	case probe.ID == "" && len(b) <= maxKeptAnswer:
		return restRecord{Status: status, Body: b}, true
	}
	return restRecord{}, false
}

// replay answers a replayed key from its record: the resource re-read by
// the agent's own get tool, or the answer kept whole.
func (u *UCP) replay(ctx context.Context, meta Meta, stored []byte, reread shop.Tool) (int, []byte, error) {
	var rec restRecord
	if err := json.Unmarshal(stored, &rec); err != nil {
		return 0, nil, err
	}
	if rec.ID == "" {
		return rec.Status, rec.Body, nil
	}
	meta.IdempotencyKey = ""
	args, err := json.Marshal(map[string]any{"meta": meta, "id": rec.ID})
	if err != nil {
		return 0, nil, err
	}
	res, err := reread.Handle(ctx, args)
	if err != nil {
		return 0, nil, err
	}
	b, err := json.Marshal(res.Structured)
	if err != nil {
		return 0, nil, err
	}
	if isErrorResponse(b) { // gone since (swept): not the status of what was made
		return http.StatusOK, b, nil
	}
	return rec.Status, b, nil
}

// keepable reports whether an answer is final: not a checkout still being
// paid, not a refusal to retry (conflict, unavailable).
func keepable(b []byte) bool {
	var probe struct {
		Status   string `json:"status"`
		Messages []struct {
			Code string `json:"code"`
		} `json:"messages"`
	}
	if json.Unmarshal(b, &probe) != nil || probe.Status == "complete_in_progress" {
		return false
	}
	for _, m := range probe.Messages {
		if m.Code == string(shop.Conflict) || m.Code == "unavailable" {
			return false
		}
	}
	return true
}
