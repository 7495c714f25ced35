package shop

import (
	"crypto/rand"
	"strings"
)

// NewID returns a new unguessable id: prefix ("cs_", "ord_", …) and 26
// characters of lower-case base32 (a–z, 2–7) from crypto/rand.Text, 130
// random bits. Every id the shop makes comes from here.
func NewID(prefix string) string {
	return prefix + strings.ToLower(rand.Text())
}
