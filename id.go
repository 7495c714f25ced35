package shop

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"strings"
	"time"
)

// NewID returns a new unguessable id: prefix ("cs_", "ord_", …), the time in
// 9 characters, then 26 characters from crypto/rand.Text (130 random bits),
// all lower-case base32 (a–z, 2–7). Every id the shop makes comes from here.
//
// The time part (milliseconds since 1970, in an alphabet in ASCII order)
// makes ids sort by when they were made, so that an index keyed by them
// grows at its end: a commit writes that last page once for all the rows it
// adds, instead of a page in a random place for each (docs/architecture.md,
// "Cost of a purchase").
func NewID(prefix string) string {
	return prefix + timePart(time.Now()) + strings.ToLower(rand.Text())
}

// IDTimeLen is the length of an id's time part.
const IDTimeLen = 9

// timeEncoding is base32 in an alphabet in ASCII order, so that the text of
// a later time sorts after an earlier one's.
var timeEncoding = base32.NewEncoding("234567abcdefghijklmnopqrstuvwxyz").WithPadding(base32.NoPadding)

// timePart is t in IDTimeLen characters: its 45 low bits of milliseconds
// since 1970 (enough for the next thousand years).
func timePart(t time.Time) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(t.UnixMilli())<<19) // the 45 bits first
	return timeEncoding.EncodeToString(b[:])[:IDTimeLen]
}
