package checkout

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"time"
)

// seenFigures are what a payment page shows of a session, and so what the
// payer agrees to when paying there: its lines, totals, shipping address and
// the chosen option with its delivery window.
type seenFigures struct {
	Currency string      `json:"c"`
	Lines    []seenLine  `json:"l"`
	Totals   []Total     `json:"t"`
	Address  *Address    `json:"a"`
	Option   *seenOption `json:"o"`
}

type seenLine struct {
	Variant  string `json:"v"`
	Name     string `json:"n"`
	Quantity int64  `json:"q"`
	Unit     int64  `json:"u"`
	Total    int64  `json:"t"`
}

type seenOption struct {
	ID       string    `json:"id"`
	Total    int64     `json:"t"`
	Earliest time.Time `json:"e"`
	Latest   time.Time `json:"l"`
}

// SeenToken is the signed "what you saw" of a session's payment page:
// base64url(HMAC-SHA256(key, "seen:" + id + figures)), over the figures the
// page shows (the lines, totals, shipping address and chosen option with its
// delivery window). The page's form carries it, and its payment sends it
// back as CompleteRequest.Seen: a session whose figures changed since the
// page was shown is then refused and nothing is charged.
func (c *Checkout) SeenToken(s *Session) string {
	return base64.RawURLEncoding.EncodeToString(c.seenMAC(s))
}

// validSeen reports whether token is the SeenToken of s as it is now,
// comparing in constant time.
func (c *Checkout) validSeen(s *Session, token string) bool {
	got, err := base64.RawURLEncoding.Strict().DecodeString(token)
	return err == nil && len(got) == sha256.Size && hmac.Equal(got, c.seenMAC(s))
}

func (c *Checkout) seenMAC(s *Session) []byte {
	f := seenFigures{Currency: s.Currency, Totals: s.Totals, Address: s.FulfillmentAddress}
	for _, l := range s.LineItems {
		f.Lines = append(f.Lines, seenLine{Variant: l.Item.ID, Name: l.Name, Quantity: l.Item.Quantity, Unit: l.UnitAmount, Total: l.Total})
	}
	for _, o := range s.FulfillmentOptions {
		if o.ID == s.FulfillmentOptionID {
			f.Option = &seenOption{ID: o.ID, Total: o.Total, Earliest: o.EarliestDeliveryTime.UTC(), Latest: o.LatestDeliveryTime.UTC()}
		}
	}
	m := hmac.New(sha256.New, c.linkKey)
	m.Write([]byte("seen:" + s.ID + "\n"))
	m.Write([]byte(marshal(f)))
	return m.Sum(nil)
}
