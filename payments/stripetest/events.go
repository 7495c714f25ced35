package stripetest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Event returns a webhook event of type typ (such as
// "checkout.session.completed" or "payment_intent.succeeded") about the
// object objectID (a cs_…, pi_… or re_… id) as it is now, and its
// Stripe-Signature header, signed with secret now as Stripe signs:
// "t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<payload>">".
func (s *Server) Event(typ, secret string, objectID string) (payload []byte, signature string) {
	s.t.Helper()
	s.mu.Lock()
	var obj any
	switch {
	case s.sessions[objectID] != nil:
		cs := s.sessions[objectID]
		s.refresh(cs)
		obj = cs
	case s.intents[objectID] != nil:
		obj = s.intents[objectID]
	default:
		for _, re := range s.refunds {
			if re.ID == objectID {
				obj = re
			}
		}
	}
	if obj == nil {
		s.mu.Unlock()
		s.t.Fatalf("stripetest: Event: no object %q", objectID)
		return nil, ""
	}
	now := s.now()
	ev := map[string]any{
		"id": s.randID("evt_1", 24), "object": "event", "api_version": APIVersion,
		"created": now.Unix(), "data": map[string]any{"object": obj},
		"livemode": false, "pending_webhooks": 1,
		"request": map[string]any{"id": nil, "idempotency_key": nil}, "type": typ,
	}
	payload, err := json.MarshalIndent(ev, "", "  ")
	s.mu.Unlock()
	if err != nil {
		s.t.Fatalf("stripetest: Event: %v", err)
	}
	return payload, Sign(payload, secret, time.Now())
}

// Sign returns the Stripe-Signature header of payload signed with secret at
// t, as Stripe signs webhooks.
func Sign(payload []byte, secret string, t time.Time) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", t.Unix())
	mac.Write(payload)
	return fmt.Sprintf("t=%d,v1=%s", t.Unix(), hex.EncodeToString(mac.Sum(nil)))
}
