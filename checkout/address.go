package checkout

import (
	"fmt"
	"maps"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"shop"
)

// Bounds of buyer input, in characters (the email in bytes, as RFC 5321
// counts it). Input beyond them is refused outright rather than reported in
// the session's messages.
const (
	maxNameLen          = 200
	maxLineLen          = 200
	maxCityLen          = 100
	maxStateLen         = 100
	maxCountryLen       = 100 // room for a country's name, which addressProblems then asks to replace by its code
	maxPostalLen        = 20
	maxEmailLen         = 254
	maxPhoneLen         = 32
	maxMetadataKeys     = 20
	maxMetadataKeyLen   = 40
	maxMetadataValueLen = 500
	// maxMetadataBytes bounds a session's metadata as a whole: its keys and
	// values together, in bytes of UTF-8, what a host's few references take.
	maxMetadataBytes = 4096
)

// addressField is one text field of an Address: its JSON name, how a buyer
// calls it and its bound.
type addressField struct {
	key, what string
	max       int
	get       func(*Address) *string
}

// addressFields are the text fields of an Address in the contract's order.
var addressFields = []addressField{
	{"name", "name", maxNameLen, func(a *Address) *string { return &a.Name }},
	{"line_one", "street address", maxLineLen, func(a *Address) *string { return &a.LineOne }},
	{"line_two", "second address line", maxLineLen, func(a *Address) *string { return &a.LineTwo }},
	{"city", "city", maxCityLen, func(a *Address) *string { return &a.City }},
	{"state", "state", maxStateLen, func(a *Address) *string { return &a.State }},
	{"country", "country", maxCountryLen, func(a *Address) *string { return &a.Country }},
	{"postal_code", "postal code", maxPostalLen, func(a *Address) *string { return &a.PostalCode }},
	{"phone_number", "phone number", maxPhoneLen, func(a *Address) *string { return &a.PhoneNumber }},
}

// addressParam is the JSONPath of an address field.
func addressParam(key string) string { return "$.fulfillment_address." + key }

// checkInputText returns a *shop.Error (code invalid, at param) when s, once
// trimmed of surrounding spaces, is longer than max characters or is not
// plain text (checkPlainText); nil otherwise. what names the field for the
// buyer.
func checkInputText(param, what, s string, max int) error {
	s = strings.TrimSpace(s)
	if utf8.ValidString(s) && utf8.RuneCountInString(s) > max {
		return shop.Errorf(shop.Invalid, param, "Keep the %s to %d characters or fewer.", what, max)
	}
	return checkPlainText(param, what, s)
}

// checkPlainText returns a *shop.Error (code invalid, at param) when s is
// not valid UTF-8, holds a control character (Unicode category Cc: line
// breaks, tabs, NUL, …) or a bidirectional override or isolate (U+202A to
// U+202E, U+2066 to U+2069), which would make a receipt, an email or the
// staff's screens show the text in another order than it was written.
func checkPlainText(param, what, s string) error {
	switch {
	case !utf8.ValidString(s):
		return shop.Errorf(shop.Invalid, param, "The %s has characters that can't be read; send it as plain UTF-8 text.", what)
	case strings.ContainsFunc(s, unicode.IsControl):
		return shop.Errorf(shop.Invalid, param, "The %s has a control character such as a line break or tab; send it on one line.", what)
	case strings.ContainsFunc(s, isBidiControl):
		return shop.Errorf(shop.Invalid, param,
			"The %s has an invisible character that reorders text (a bidirectional override or isolate, U+202A to U+202E or U+2066 to U+2069); send it without.", what)
	}
	return nil
}

// isBidiControl reports whether r is a bidirectional embedding, override
// or isolate: U+202A to U+202E (LRE, RLE, PDF, LRO, RLO) or U+2066 to
// U+2069 (LRI, RLI, FSI, PDI).
func isBidiControl(r rune) bool {
	return r >= '\u202A' && r <= '\u202E' || r >= '\u2066' && r <= '\u2069'
}

// checkAddressBounds returns a *shop.Error (code invalid, param
// "$.fulfillment_address.<field>") for the first field, in the contract's
// order, that is longer than its bound, is not valid UTF-8 or holds control
// characters; such input is refused outright. Spaces around a field do not
// count, since normalizeAddress trims them. It returns nil otherwise, and for
// a nil address.
func checkAddressBounds(a *Address) error {
	if a == nil {
		return nil
	}
	for _, f := range addressFields {
		if err := checkInputText(addressParam(f.key), f.what, *f.get(a), f.max); err != nil {
			return err
		}
	}
	return nil
}

// normalizeAddress trims spaces around every field, upper-cases the country
// and, for US and CA, the state, and upper-cases the postal code of CA, GB,
// NL, IE and SE and writes it with its one space in place: "k1a0b1" becomes
// "K1A 0B1", "sw1a1aa" "SW1A 1AA", "1234ab" "1234 AB", "a65f4e2" "A65 F4E2"
// and "12345" "123 45". A postal code too short or too long for its country's
// shape, or not ASCII, keeps its own spacing. A nil address is left alone.
func normalizeAddress(a *Address) {
	if a == nil {
		return
	}
	for _, f := range addressFields {
		p := f.get(a)
		*p = strings.TrimSpace(*p)
	}
	a.Country = strings.ToUpper(a.Country)
	if a.Country == "US" || a.Country == "CA" {
		a.State = strings.ToUpper(a.State)
	}
	switch a.Country {
	case "CA", "GB", "NL", "IE", "SE":
		pc := strings.ToUpper(a.PostalCode)
		compact := strings.Join(strings.Fields(pc), "")
		if i := spaceAt(a.Country, len(compact)); i > 0 && utf8.RuneCountInString(compact) == len(compact) {
			pc = compact[:i] + " " + compact[i:]
		}
		a.PostalCode = pc
	}
}

// spaceAt returns where the space goes in a postal code of country (CA, GB,
// NL, IE or SE) written as n characters without spaces, or 0 when n does not
// fit the country's shape.
func spaceAt(country string, n int) int {
	switch {
	case country == "CA" && n == 6, country == "IE" && n == 7, country == "SE" && n == 5:
		return 3
	case country == "NL" && n == 6:
		return 4
	case country == "GB" && n >= 5 && n <= 7:
		return n - 3 // the inward code is the last 3
	}
	return 0
}

// postalRule is the shape of a country's postal codes and how to tell a
// buyer about it.
type postalRule struct {
	re      *regexp.Regexp
	hint    string
	example string // the hint's first example ("10115"), "" without one
}

func postalShape(pattern, hint string) postalRule {
	example := ""
	if _, after, ok := strings.Cut(hint, "like "); ok {
		example, _, _ = strings.Cut(after, ",")
		example = strings.TrimSuffix(example, ".")
	}
	return postalRule{regexp.MustCompile("^(?:" + pattern + ")$"), hint, example}
}

// Postal code shapes, matched against normalized (upper-case) codes.
const (
	fiveDigits = `[0-9]{5}`
	fourDigits = `[0-9]{4}`
	// gbPostcode is a UK outward code (A9, A99, AA9, AA99, A9A, AA9A), an
	// optional space and an inward code, or the Girobank's GIR 0AA.
	gbPostcode = `GIR ?0AA|(?:[A-Z][0-9][0-9]?|[A-Z][A-HJ-Y][0-9][0-9]?|[A-Z][0-9][A-Z]|[A-Z][A-HJ-Y][0-9][A-Z]) ?[0-9][ABD-HJLNP-UW-Z]{2}`
	// caPostalCode is a Canadian forward sortation area and local delivery
	// unit; D, F, I, O, Q and U are never used, W and Z never first.
	caPostalCode = `[ABCEGHJ-NPRSTVXY][0-9][ABCEGHJ-NPRSTV-Z] ?[0-9][ABCEGHJ-NPRSTV-Z][0-9]`
	// ieEircode is a routing key (a letter and two digits, or D6W) and a
	// unique identifier of four characters.
	ieEircode = `(?:[ACDEFHKNPRTVWXY][0-9]{2}|D6W) ?[0-9ACDEFHKNPRTVWXY]{4}`
)

// postalRules are the postal code shapes of the countries the shop knows;
// other countries get otherPostal.
var postalRules = map[string]postalRule{
	"US": postalShape(`[0-9]{5}(?:-[0-9]{4})?`, "A US ZIP code has 5 digits, like 94131, or 5+4 digits, like 94131-1234."),
	"CA": postalShape(caPostalCode, "A Canadian postal code looks like K1A 0B1."),
	"GB": postalShape(gbPostcode, "A UK postcode looks like SW1A 1AA."),
	"DE": postalShape(fiveDigits, "A German postal code has 5 digits, like 10115."),
	"FR": postalShape(fiveDigits, "A French postal code has 5 digits, like 75001."),
	"ES": postalShape(fiveDigits, "A Spanish postal code has 5 digits, like 28001."),
	"IT": postalShape(fiveDigits, "An Italian postal code has 5 digits, like 00184."),
	"FI": postalShape(fiveDigits, "A Finnish postal code has 5 digits, like 00100."),
	"NL": postalShape(`[1-9][0-9]{3} ?[A-Z]{2}`, "A Dutch postcode has 4 digits and 2 letters, like 1012 AB."),
	"IE": postalShape(ieEircode, "An Eircode has 7 letters and digits, like A65 F4E2."),
	"BE": postalShape(fourDigits, "A Belgian postal code has 4 digits, like 1000."),
	"AT": postalShape(fourDigits, "An Austrian postal code has 4 digits, like 1010."),
	"DK": postalShape(fourDigits, "A Danish postal code has 4 digits, like 2100."),
	"SE": postalShape(`[0-9]{3} ?[0-9]{2}`, "A Swedish postcode has 5 digits, like 114 55."),
	"PT": postalShape(`[0-9]{4}-[0-9]{3}`, "A Portuguese postal code looks like 1000-001."),
	"AU": postalShape(fourDigits, "An Australian postcode has 4 digits, like 2000."),
	"JP": postalShape(`[0-9]{3}-[0-9]{4}`, "A Japanese postal code looks like 100-0001."),
}

// otherPostal is the shape accepted for the other countries: 2 to 10
// letters, digits, spaces and hyphens, starting and ending with a letter or
// digit.
var otherPostal = postalShape(`[A-Za-z0-9][A-Za-z0-9 -]{0,8}[A-Za-z0-9]`,
	"Send the postal code as 2 to 10 letters, digits, spaces or hyphens.")

// stateCodes are the codes accepted as the state of an address in the US
// (USPS: the states, DC, the territories and the armed forces) and Canada
// (the provinces and territories).
var stateCodes = map[string]map[string]bool{
	"US": codeSet(`AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD
		MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT
		VT VA WA WV WI WY DC PR AS GU MP VI AA AE AP`),
	"CA": codeSet(`AB BC MB NB NL NS NT NU ON PE QC SK YT`),
}

func codeSet(codes string) map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(codes) {
		m[c] = true
	}
	return m
}

// stateWords says what a country calls the state field, for the countries
// where it is required.
var stateWords = map[string]string{"US": "state", "CA": "province or territory", "AU": "state or territory"}

// addressProblems returns one error Message per problem that keeps the
// address from being shippable, for the session's messages: nothing is
// refused, the model asks the buyer to fix them. It reads the address as
// normalizeAddress would leave it and does not change it. In order:
//
//   - each missing required field, in the contract's order: name, line_one,
//     city, state (for US, CA and AU only), country, postal_code (code missing);
//   - a country that is not an ISO 3166-1 alpha-2 code (code invalid);
//   - a valid country in none of the policy's shipping zones (code invalid,
//     listing the countries the policy ships to);
//   - a postal code of the wrong shape for the country (code invalid);
//   - a US or CA state that is not one of the country's codes (code invalid).
//
// The checks that depend on the country (state required, postal code shape,
// state code) run only when the country is valid and shipped to. A nil
// address gives one message, code missing, param "$.fulfillment_address". The
// result is empty, not nil, when the address is fine.
func addressProblems(p *Policy, a *Address) []Message {
	msgs := []Message{}
	if a == nil {
		return append(msgs, keyed(addressMessage(shop.Missing, "$.fulfillment_address", "Add a shipping address."), KeyAddressMissing))
	}
	n := *a
	normalizeAddress(&n)
	country := n.Country
	valid := isCountry(country)
	_, shipped := p.Zone(country)
	local := valid && shipped // the country-specific checks apply

	missing := func(key, content string) {
		m := keyed(addressMessage(shop.Missing, addressParam(key), content), "address."+key+".missing", "field", key)
		if key == "state" {
			m.Params["country"] = country
		}
		msgs = append(msgs, m)
	}
	if n.Name == "" {
		missing("name", "Add the name of the person receiving the order.")
	}
	if n.LineOne == "" {
		missing("line_one", "Add the street address.")
	}
	if n.City == "" {
		missing("city", "Add the city.")
	}
	if word, required := stateWords[country]; required && local && n.State == "" {
		missing("state", "Add the "+word+".")
	}
	if country == "" {
		missing("country", "Add the country.")
	}
	if n.PostalCode == "" {
		missing("postal_code", "Add the postal code.")
	}

	invalid := func(key, content, msgKey string, params ...string) {
		msgs = append(msgs, keyed(addressMessage(shop.Invalid, addressParam(key), content), msgKey, params...))
	}
	switch {
	case country == "":
	case !valid:
		invalid("country", "Send the country as a two-letter ISO code, such as US or DE.", KeyAddressCountryInvalid, "country_typed", country)
	case !shipped:
		listed := shippedCountries(p)
		invalid("country", fmt.Sprintf("We don't ship to %s; we ship to: %s.", country, listed),
			KeyAddressNotShipped, "country", country, "countries", listed)
	}
	if local && n.PostalCode != "" {
		r, ok := postalRules[country]
		if !ok {
			r = otherPostal
		}
		if !r.re.MatchString(n.PostalCode) {
			params := []string{"country", country}
			if r.example != "" {
				params = append(params, "example", r.example)
			}
			invalid("postal_code", r.hint, KeyAddressPostalInvalid, params...)
		}
	}
	if codes := stateCodes[country]; local && codes != nil && n.State != "" && !codes[n.State] {
		example := map[string]string{"US": "CA or NY", "CA": "ON or QC"}[country]
		invalid("state", fmt.Sprintf("Send the %s as its two-letter code, such as %s.", stateWords[country], example),
			KeyAddressStateInvalid, "country", country, "example", example[:2])
	}
	return msgs
}

// maxListedCountries bounds the countries an unshippable-country message lists.
const maxListedCountries = 30

// shippedCountries lists the policy's countries in the order of its zones,
// "US, CA, DE", cut after maxListedCountries with the number left out.
func shippedCountries(p *Policy) string {
	var all []string
	for _, z := range p.Shipping.Zones {
		all = append(all, z.Countries...)
	}
	if len(all) > maxListedCountries {
		return fmt.Sprintf("%s and %d more", strings.Join(all[:maxListedCountries], ", "), len(all)-maxListedCountries)
	}
	return strings.Join(all, ", ")
}

// addressMessage is an error Message with plain content.
func addressMessage(code shop.Code, param, content string) Message {
	return Message{Type: MessageError, Code: string(code), Param: param, ContentType: "plain", Content: content}
}

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
