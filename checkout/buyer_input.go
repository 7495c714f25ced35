package checkout

// The checks of what a caller says of the buyer: their name, email and phone,
// the session's items and its metadata.

import (
	"fmt"
	"maps"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"shop"
	"shop/catalog"
)

// checkBuyer trims the buyer's fields and refuses outright, with a
// *shop.Error, a buyer
//
//   - whose name, first_name or last_name is longer than maxNameLen, is not
//     valid UTF-8 or holds control characters (code invalid);
//   - whose email is missing (code missing, "$.buyer.email") or not an email
//     (code invalid): longer than maxEmailLen bytes, not exactly one @, a
//     display name or angle brackets, no dot in the domain (or an empty
//     label, or an IP literal), or not parsed by net/mail;
//   - whose phone_number, when given, is not 7 to 15 digits once spaces,
//     dashes, dots, parentheses and one leading + are taken out (code
//     invalid, "$.buyer.phone_number").
//
// The first problem in that order is returned. When the buyer is fine the
// email's domain is lower-cased. A nil buyer is fine: the buyer is optional.
func checkBuyer(b *Buyer) error {
	if b == nil {
		return nil
	}
	for _, s := range []*string{&b.Name, &b.FirstName, &b.LastName, &b.Email, &b.PhoneNumber} {
		*s = strings.TrimSpace(*s)
	}
	for _, f := range []struct{ key, what, s string }{
		{"name", "name", b.Name}, {"first_name", "first name", b.FirstName}, {"last_name", "last name", b.LastName},
	} {
		if err := checkInputText("$.buyer."+f.key, f.what, f.s, maxNameLen); err != nil {
			return err
		}
	}
	domain, err := checkEmail(b.Email)
	if err != nil {
		return err
	}
	if err := checkPhone(b.PhoneNumber); err != nil {
		return err
	}
	b.Email = b.Email[:len(b.Email)-len(domain)] + strings.ToLower(domain)
	return nil
}

// checkEmail returns the domain of a plain email address such as
// name@example.com, or a *shop.Error at "$.buyer.email".
func checkEmail(email string) (domain string, err error) {
	const param = "$.buyer.email"
	if email == "" {
		return "", shop.Errorf(shop.Missing, param, "Add the buyer's email address.")
	}
	if len(email) > maxEmailLen {
		return "", shop.Errorf(shop.Invalid, param, "Keep the email address to %d characters or fewer.", maxEmailLen)
	}
	if err := checkPlainText(param, "email address", email); err != nil {
		return "", err
	}
	bad := shop.Errorf(shop.Invalid, param, "That email address doesn't look right; send one like name@example.com.")
	if strings.Count(email, "@") != 1 {
		return "", bad
	}
	addr, perr := mail.ParseAddress(email)
	if perr != nil || addr.Name != "" || addr.Address != email {
		return "", bad
	}
	_, domain, _ = strings.Cut(email, "@")
	if !strings.Contains(domain, ".") || slices.Contains(strings.Split(domain, "."), "") || strings.HasPrefix(domain, "[") {
		return "", bad
	}
	return domain, nil
}

// checkPhone returns a *shop.Error at "$.buyer.phone_number" unless phone is
// empty or 7 to 15 digits once spaces, dashes, dots, parentheses and one
// leading + are taken out.
func checkPhone(phone string) error {
	if phone == "" {
		return nil
	}
	const param = "$.buyer.phone_number"
	bad := shop.Errorf(shop.Invalid, param, "Send the phone number with 7 to 15 digits, such as +1 415 555 0100.")
	if len(phone) > maxPhoneLen {
		return bad
	}
	digits := 0
	for _, r := range strings.TrimPrefix(phone, "+") {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case strings.ContainsRune(" -.()", r):
		default:
			return bad
		}
	}
	if digits < 7 || digits > 15 {
		return bad
	}
	return nil
}

// checkMetadata refuses, with a *shop.Error of code invalid, metadata that
// is more than a host needs to keep its references with a session:
//
//   - more than maxMetadataKeys keys ("$.metadata");
//   - a key that is not 1 to maxMetadataKeyLen letters, digits, '_', '.',
//     ':' or '-' ("$.metadata");
//   - a value longer than maxMetadataValueLen characters, or that is not
//     plain text: invalid UTF-8, control characters or bidirectional
//     overrides ("$.metadata.<key>", or "$.metadata['<key>']" for a key
//     that JSONPath's dot notation cannot name);
//   - keys and values of more than maxMetadataBytes in all ("$.metadata").
//
// Keys are checked in sorted order, so the error is always the same for the
// same metadata.
func checkMetadata(m map[string]string) error {
	const param = "$.metadata"
	if len(m) > maxMetadataKeys {
		return shop.Errorf(shop.Invalid, param, "Send at most %d metadata keys (got %d).", maxMetadataKeys, len(m))
	}
	size := 0
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "" {
			return shop.Errorf(shop.Invalid, param, "Metadata keys can't be empty; name each value, such as order_ref.")
		}
		if len(k) > maxMetadataKeyLen || !metadataKey.MatchString(k) {
			return shop.Errorf(shop.Invalid, param,
				"Metadata keys are 1 to %d letters, digits, '_', '.', ':' or '-' (got %.*q); rename it, such as order_ref.",
				maxMetadataKeyLen, maxMetadataKeyLen, k)
		}
		v := m[k]
		at := metadataParam(k)
		if utf8.ValidString(v) && utf8.RuneCountInString(v) > maxMetadataValueLen {
			return shop.Errorf(shop.Invalid, at, "Keep each metadata value to %d characters or fewer.", maxMetadataValueLen)
		}
		if err := checkPlainText(at, "metadata value "+k, v); err != nil {
			return err
		}
		size += len(k) + len(v)
	}
	if size > maxMetadataBytes {
		return shop.Errorf(shop.Invalid, param,
			"The metadata is %d bytes of keys and values in all; send at most %d, such as a few short references.", size, maxMetadataBytes)
	}
	return nil
}

// metadataKey matches the metadata keys a session takes.
var metadataKey = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)

// plainKey matches the metadata keys that JSONPath's dot notation can name.
var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// metadataParam is the JSONPath of a metadata value.
func metadataParam(key string) string {
	if plainKey.MatchString(key) {
		return "$.metadata." + key
	}
	return "$.metadata['" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(key) + "']"
}

// checkItems refuses items a session cannot hold: none, too many lines, a
// line without a valid variant id or quantity, a variant twice.
func checkItems(items []Item) error {
	if len(items) == 0 {
		return shop.Errorf(shop.Missing, "$.items", `send at least one item, such as [{"id": "enamel-camp-mug-slate", "quantity": 1}]; to drop the whole cart, cancel the session`)
	}
	if len(items) > MaxLines {
		return shop.Errorf(shop.Invalid, "$.items", "%d lines; a session holds at most %d", len(items), MaxLines)
	}
	seen := map[string]int{}
	for i, it := range items {
		at := fmt.Sprintf("$.items[%d]", i)
		switch {
		case it.ID == "":
			return shop.Errorf(shop.Missing, at+".id", "send a variant id from get_product")
		case !catalog.ValidID(it.ID):
			return shop.Errorf(shop.Invalid, at+".id", "not a variant id; send one from get_product")
		case it.Quantity < 1 || it.Quantity > MaxQuantity:
			return shop.Errorf(shop.Invalid, at+".quantity", "must be from 1 to %d (got %d)", MaxQuantity, it.Quantity)
		}
		if j, dup := seen[it.ID]; dup {
			return shop.Errorf(shop.Invalid, at+".id", "variant %q is already in items[%d]; send each variant once, with the whole quantity", it.ID, j)
		}
		seen[it.ID] = i
	}
	return nil
}
