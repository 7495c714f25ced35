package shop

import (
	"encoding/base64"
	"encoding/json"
)

// EncodeCursor is the one codec of the tools' page cursors (search_products,
// list_orders, list_audit_events): a page's position, a plain struct of the
// caller's with the version of its shape and a fingerprint of the query it
// belongs to, in JSON, base64url without padding. The caller checks the
// version and fingerprint it decodes.
func EncodeCursor(position any) string {
	b, err := json.Marshal(position)
	if err != nil {
		panic(err) // only plain structs of numbers and strings reach here
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor decodes a cursor EncodeCursor made into position, reporting
// whether s is one.
func DecodeCursor(s string, position any) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && json.Unmarshal(b, position) == nil
}
