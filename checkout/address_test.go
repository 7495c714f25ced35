package checkout

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"shop"
)

// addrDemoPolicy is the demo shop's policy: it ships to US, CA and 13
// European countries.
func addrDemoPolicy(t *testing.T) *Policy {
	t.Helper()
	p, err := LoadPolicyFile(os.DirFS("../testdata/demo"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// addrWidePolicy is the demo policy with one more zone, for AU, JP, NO and CH.
func addrWidePolicy(t *testing.T) *Policy {
	t.Helper()
	p := *addrDemoPolicy(t)
	p.Shipping.Zones = append(slices.Clone(p.Shipping.Zones), Zone{
		ID: "rest", Name: "Rest of the world", Countries: []string{"AU", "JP", "NO", "CH"},
		Rates: []ShippingRate{{ID: "rest-standard", Title: "Standard", Price: 2500, MinDays: 7, MaxDays: 21}},
	})
	return &p
}

// addrAt returns a valid address in country with the given postal code and
// state.
func addrAt(country, state, postal string) Address {
	return Address{
		Name: "Ada Lovelace", LineOne: "1 Main Street", LineTwo: "Flat 2", City: "Somewhere",
		State: state, Country: country, PostalCode: postal,
	}
}

func addrMissing(key, content string) Message {
	return Message{Type: MessageError, Code: "missing", Param: "$.fulfillment_address." + key, ContentType: "plain", Content: content}
}

func addrInvalid(key, content string) Message {
	return Message{Type: MessageError, Code: "invalid", Param: "$.fulfillment_address." + key, ContentType: "plain", Content: content}
}

// addrErr is what a test compares of an error: its code and param, or
// nothing for nil.
type addrErr struct{ Code, Param string }

func addrErrOf(t *testing.T, err error) *addrErr {
	t.Helper()
	if err == nil {
		return nil
	}
	var e *shop.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *shop.Error", err, err)
	}
	if e.Message == "" {
		t.Errorf("error %+v has no message", e)
	}
	return &addrErr{string(e.Code), e.Param}
}

func addrInvalidAt(param string) *addrErr { return &addrErr{"invalid", param} }

func TestAddressProblems(t *testing.T) {
	demo, wide := addrDemoPolicy(t), addrWidePolicy(t)
	const (
		usZIP   = "A US ZIP code has 5 digits, like 94131, or 5+4 digits, like 94131-1234."
		caCode  = "A Canadian postal code looks like K1A 0B1."
		gbCode  = "A UK postcode looks like SW1A 1AA."
		deCode  = "A German postal code has 5 digits, like 10115."
		nlCode  = "A Dutch postcode has 4 digits and 2 letters, like 1012 AB."
		ieCode  = "An Eircode has 7 letters and digits, like A65 F4E2."
		seCode  = "A Swedish postcode has 5 digits, like 114 55."
		other   = "Send the postal code as 2 to 10 letters, digits, spaces or hyphens."
		isoCode = "Send the country as a two-letter ISO code, such as US or DE."
		usState = "Send the state as its two-letter code, such as CA or NY."
		caProv  = "Send the province or territory as its two-letter code, such as ON or QC."
	)
	postal := func(content string) []Message { return []Message{addrInvalid("postal_code", content)} }
	tests := []struct {
		name   string
		policy *Policy // demo when nil
		addr   *Address
		want   []Message
	}{
		{name: "OK_US", addr: &Address{Name: "Ada", LineOne: "1 Market St", City: "San Francisco", State: "CA", Country: "US", PostalCode: "94105"}},
		{name: "OK_USZipPlus4", addr: addrPtr(addrAt("US", "NY", "10001-1234"))},
		{name: "OK_USTerritory", addr: addrPtr(addrAt("US", "PR", "00901"))},
		{name: "OK_USArmedForces", addr: addrPtr(addrAt("US", "AE", "09001"))},
		{name: "OK_USLowerCase", addr: addrPtr(addrAt("us", "wa", " 98101 "))},
		{name: "OK_CA", addr: addrPtr(addrAt("CA", "ON", "K1A 0B1"))},
		{name: "OK_CANoSpaceLowerCase", addr: addrPtr(addrAt("ca", "qc", "h2x1y4"))},
		{name: "OK_GB", addr: addrPtr(addrAt("GB", "", "SW1A 1AA"))},
		{name: "OK_GBShortOutward", addr: addrPtr(addrAt("GB", "", "M1 1AE"))},
		{name: "OK_GBNoSpace", addr: addrPtr(addrAt("GB", "Greater London", "ec1a1bb"))},
		{name: "OK_GBGirobank", addr: addrPtr(addrAt("GB", "", "GIR 0AA"))},
		{name: "OK_DE", addr: addrPtr(addrAt("DE", "", "10115"))},
		{name: "OK_NL", addr: addrPtr(addrAt("NL", "", "1012 AB"))},
		{name: "OK_NLNoSpace", addr: addrPtr(addrAt("NL", "", "1012ab"))},
		{name: "OK_IE", addr: addrPtr(addrAt("IE", "", "A65 F4E2"))},
		{name: "OK_IEDublin6W", addr: addrPtr(addrAt("IE", "", "D6W XY12"))},
		{name: "OK_SE", addr: addrPtr(addrAt("SE", "", "114 55"))},
		{name: "OK_SENoSpace", addr: addrPtr(addrAt("SE", "", "11455"))},
		{name: "OK_FR", addr: addrPtr(addrAt("FR", "", "75001"))},
		{name: "OK_ES", addr: addrPtr(addrAt("ES", "", "28001"))},
		{name: "OK_IT", addr: addrPtr(addrAt("IT", "", "00184"))},
		{name: "OK_FI", addr: addrPtr(addrAt("FI", "", "00100"))},
		{name: "OK_BE", addr: addrPtr(addrAt("BE", "", "1000"))},
		{name: "OK_AT", addr: addrPtr(addrAt("AT", "", "1010"))},
		{name: "OK_DK", addr: addrPtr(addrAt("DK", "", "2100"))},
		{name: "OK_PT", addr: addrPtr(addrAt("PT", "", "1000-001"))},
		{name: "OK_AU", policy: wide, addr: addrPtr(addrAt("AU", "NSW", "2000"))},
		{name: "OK_JP", policy: wide, addr: addrPtr(addrAt("JP", "", "100-0001"))},
		{name: "OK_OtherCountry", policy: wide, addr: addrPtr(addrAt("CH", "", "8001"))},
		{name: "OK_NoLineTwo", addr: &Address{Name: "Ada", LineOne: "Unter den Linden 1", City: "Berlin", Country: "DE", PostalCode: "10117"}},

		{name: "ErrNilAddress", addr: nil, want: []Message{{
			Type: MessageError, Code: "missing", Param: "$.fulfillment_address", ContentType: "plain", Content: "Add a shipping address.",
		}}},
		{name: "ErrMissingName", addr: &Address{LineOne: "1 Main St", City: "Austin", State: "TX", Country: "US", PostalCode: "78701"},
			want: []Message{addrMissing("name", "Add the name of the person receiving the order.")}},
		{name: "ErrMissingLineOne", addr: &Address{Name: "Ada", LineTwo: "Apt 1", City: "Austin", State: "TX", Country: "US", PostalCode: "78701"},
			want: []Message{addrMissing("line_one", "Add the street address.")}},
		{name: "ErrMissingCity", addr: &Address{Name: "Ada", LineOne: "1 Main St", City: "   ", State: "TX", Country: "US", PostalCode: "78701"},
			want: []Message{addrMissing("city", "Add the city.")}},
		{name: "ErrMissingStateUS", addr: addrPtr(addrAt("US", "", "78701")),
			want: []Message{addrMissing("state", "Add the state.")}},
		{name: "ErrMissingStateCA", addr: addrPtr(addrAt("CA", " ", "K1A 0B1")),
			want: []Message{addrMissing("state", "Add the province or territory.")}},
		{name: "ErrMissingStateAU", policy: wide, addr: addrPtr(addrAt("AU", "", "2000")),
			want: []Message{addrMissing("state", "Add the state or territory.")}},
		{name: "ErrMissingCountry", addr: addrPtr(addrAt("", "TX", "78701")),
			want: []Message{addrMissing("country", "Add the country.")}},
		{name: "ErrMissingPostalCode", addr: addrPtr(addrAt("DE", "", "")),
			want: []Message{addrMissing("postal_code", "Add the postal code.")}},
		{name: "ErrMissingEverything", addr: &Address{}, want: []Message{
			addrMissing("name", "Add the name of the person receiving the order."),
			addrMissing("line_one", "Add the street address."),
			addrMissing("city", "Add the city."),
			addrMissing("country", "Add the country."),
			addrMissing("postal_code", "Add the postal code."),
		}},
		{name: "ErrMissingEverythingButCountryUS", addr: &Address{Country: "US"}, want: []Message{
			addrMissing("name", "Add the name of the person receiving the order."),
			addrMissing("line_one", "Add the street address."),
			addrMissing("city", "Add the city."),
			addrMissing("state", "Add the state."),
			addrMissing("postal_code", "Add the postal code."),
		}},

		{name: "ErrCountryThreeLetters", addr: addrPtr(addrAt("USA", "TX", "78701")), want: []Message{addrInvalid("country", isoCode)}},
		{name: "ErrCountryUnassigned", addr: addrPtr(addrAt("XX", "", "12345")), want: []Message{addrInvalid("country", isoCode)}},
		{name: "ErrCountryName", addr: addrPtr(addrAt("Germany", "", "10115")), want: []Message{addrInvalid("country", isoCode)}},
		{name: "ErrCountryNotShipped", addr: addrPtr(addrAt("JP", "", "not checked")), want: []Message{addrInvalid("country",
			"We don't ship to JP; we ship to: US, CA, DE, FR, GB, IE, NL, ES, IT, BE, AT, SE, DK, FI, PT.")}},
		{name: "ErrCountryNotShippedLowerCase", addr: &Address{Name: "Ada", Country: "au", PostalCode: "2000"}, want: []Message{
			addrMissing("line_one", "Add the street address."),
			addrMissing("city", "Add the city."),
			addrInvalid("country", "We don't ship to AU; we ship to: US, CA, DE, FR, GB, IE, NL, ES, IT, BE, AT, SE, DK, FI, PT."),
		}},

		{name: "ErrPostalUSFourDigits", addr: addrPtr(addrAt("US", "CA", "9413")), want: postal(usZIP)},
		{name: "ErrPostalUSShortPlus4", addr: addrPtr(addrAt("US", "CA", "94131-12")), want: postal(usZIP)},
		{name: "ErrPostalUSLetters", addr: addrPtr(addrAt("US", "CA", "ABCDE")), want: postal(usZIP)},
		{name: "ErrPostalCAShort", addr: addrPtr(addrAt("CA", "ON", "K1A 0B")), want: postal(caCode)},
		{name: "ErrPostalCADigitsOnly", addr: addrPtr(addrAt("CA", "ON", "123456")), want: postal(caCode)},
		{name: "ErrPostalCAUnusedLetter", addr: addrPtr(addrAt("CA", "ON", "D1A 0B1")), want: postal(caCode)},
		{name: "ErrPostalGBNoInward", addr: addrPtr(addrAt("GB", "", "SW1A")), want: postal(gbCode)},
		{name: "ErrPostalGBShortInward", addr: addrPtr(addrAt("GB", "", "SW1A 1A")), want: postal(gbCode)},
		{name: "ErrPostalGBDigitFirst", addr: addrPtr(addrAt("GB", "", "1AA 1AA")), want: postal(gbCode)},
		{name: "ErrPostalDE", addr: addrPtr(addrAt("DE", "", "1011")), want: postal(deCode)},
		{name: "ErrPostalFR", addr: addrPtr(addrAt("FR", "", "7500A")), want: postal("A French postal code has 5 digits, like 75001.")},
		{name: "ErrPostalES", addr: addrPtr(addrAt("ES", "", "280011")), want: postal("A Spanish postal code has 5 digits, like 28001.")},
		{name: "ErrPostalIT", addr: addrPtr(addrAt("IT", "", "0018")), want: postal("An Italian postal code has 5 digits, like 00184.")},
		{name: "ErrPostalFI", addr: addrPtr(addrAt("FI", "", "FI-00100")), want: postal("A Finnish postal code has 5 digits, like 00100.")},
		{name: "ErrPostalNLLeadingZero", addr: addrPtr(addrAt("NL", "", "0123 AB")), want: postal(nlCode)},
		{name: "ErrPostalNLOneLetter", addr: addrPtr(addrAt("NL", "", "1234 A")), want: postal(nlCode)},
		{name: "ErrPostalIEShort", addr: addrPtr(addrAt("IE", "", "A65 F4E")), want: postal(ieCode)},
		{name: "ErrPostalIEBadRoutingKey", addr: addrPtr(addrAt("IE", "", "B65 F4E2")), want: postal(ieCode)},
		{name: "ErrPostalBE", addr: addrPtr(addrAt("BE", "", "100")), want: postal("A Belgian postal code has 4 digits, like 1000.")},
		{name: "ErrPostalAT", addr: addrPtr(addrAt("AT", "", "10100")), want: postal("An Austrian postal code has 4 digits, like 1010.")},
		{name: "ErrPostalDK", addr: addrPtr(addrAt("DK", "", "DK-2100")), want: postal("A Danish postal code has 4 digits, like 2100.")},
		{name: "ErrPostalSE", addr: addrPtr(addrAt("SE", "", "1145")), want: postal(seCode)},
		{name: "ErrPostalSELetters", addr: addrPtr(addrAt("SE", "", "114 AB")), want: postal(seCode)},
		{name: "ErrPostalPTNoDash", addr: addrPtr(addrAt("PT", "", "1000001")), want: postal("A Portuguese postal code looks like 1000-001.")},
		{name: "ErrPostalAU", policy: wide, addr: addrPtr(addrAt("AU", "VIC", "300")), want: postal("An Australian postcode has 4 digits, like 2000.")},
		{name: "ErrPostalJPNoDash", policy: wide, addr: addrPtr(addrAt("JP", "", "1000001")), want: postal("A Japanese postal code looks like 100-0001.")},
		{name: "ErrPostalOtherOneChar", policy: wide, addr: addrPtr(addrAt("NO", "", "1")), want: postal(other)},
		{name: "ErrPostalOtherTooLong", policy: wide, addr: addrPtr(addrAt("NO", "", "12345678901")), want: postal(other)},
		{name: "ErrPostalOtherPunctuation", policy: wide, addr: addrPtr(addrAt("CH", "", "80#01")), want: postal(other)},

		{name: "ErrStateUSName", addr: addrPtr(addrAt("US", "California", "94105")), want: []Message{addrInvalid("state", usState)}},
		{name: "ErrStateUSUnknown", addr: addrPtr(addrAt("US", "XX", "94105")), want: []Message{addrInvalid("state", usState)}},
		{name: "ErrStateUSProvince", addr: addrPtr(addrAt("US", "ON", "94105")), want: []Message{addrInvalid("state", usState)}},
		{name: "ErrStateCAName", addr: addrPtr(addrAt("CA", "Ontario", "K1A 0B1")), want: []Message{addrInvalid("state", caProv)}},
		{name: "ErrStateCAUSState", addr: addrPtr(addrAt("CA", "NY", "K1A 0B1")), want: []Message{addrInvalid("state", caProv)}},

		{name: "ErrSeveralInOrder", addr: &Address{Country: "us", State: "Texas", PostalCode: "7870", LineOne: "1 Main St"}, want: []Message{
			addrMissing("name", "Add the name of the person receiving the order."),
			addrMissing("city", "Add the city."),
			addrInvalid("postal_code", usZIP),
			addrInvalid("state", usState),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.policy
			if p == nil {
				p = demo
			}
			want := tt.want
			if want == nil {
				want = []Message{}
			}
			var before Address
			if tt.addr != nil {
				before = *tt.addr
			}
			got := addressProblems(p, tt.addr)
			if diff := cmp.Diff(want, got, contentOnly); diff != "" {
				t.Errorf("addressProblems(%+v) mismatch (-want +got):\n%s", tt.addr, diff)
			}
			if tt.addr != nil && *tt.addr != before {
				t.Errorf("addressProblems changed the address: %+v, was %+v", *tt.addr, before)
			}
		})
	}
}

func TestAddressProblemsLongCountryList(t *testing.T) {
	p := addrDemoPolicy(t)
	all := strings.Fields(countryCodes)
	all = slices.DeleteFunc(all, func(c string) bool { return c == "JP" })[:35]
	p.Shipping.Zones = []Zone{{ID: "world", Countries: all, Rates: p.Shipping.Zones[0].Rates}}
	want := []Message{addrInvalid("country",
		"We don't ship to JP; we ship to: "+strings.Join(all[:30], ", ")+" and 5 more.")}
	if diff := cmp.Diff(want, addressProblems(p, addrPtr(addrAt("JP", "", "100-0001"))), contentOnly); diff != "" {
		t.Errorf("addressProblems mismatch (-want +got):\n%s", diff)
	}
}

func addrPtr[T any](v T) *T { return &v }

func TestNormalizeAddress(t *testing.T) {
	tests := []struct {
		name     string
		in, want Address
	}{
		{"OK", addrAt("US", "CA", "94105"), addrAt("US", "CA", "94105")},
		{"TrimsEveryField",
			Address{Name: " Ada ", LineOne: "\t1 Main St ", LineTwo: " ", City: " Austin\n", State: " tx ", Country: " us ", PostalCode: " 78701 ", PhoneNumber: " +1 512 555 0100 "},
			Address{Name: "Ada", LineOne: "1 Main St", City: "Austin", State: "TX", Country: "US", PostalCode: "78701", PhoneNumber: "+1 512 555 0100"}},
		{"LowerCaseCountry", addrAt("de", "", "10115"), addrAt("DE", "", "10115")},
		{"StateKeptOutsideUSAndCA", addrAt("au", "nsw", "2000"), addrAt("AU", "nsw", "2000")},
		{"CAPostalNoSpace", addrAt("CA", "on", "k1a0b1"), addrAt("CA", "ON", "K1A 0B1")},
		{"CAPostalExtraSpaces", addrAt("CA", "QC", "h2x   1y4"), addrAt("CA", "QC", "H2X 1Y4")},
		{"CAPostalWrongLengthKeptAsSent", addrAt("CA", "ON", "k1a 0b"), addrAt("CA", "ON", "K1A 0B")},
		{"GBPostal", addrAt("GB", "", "sw1a1aa"), addrAt("GB", "", "SW1A 1AA")},
		{"GBPostalShort", addrAt("gb", "", "m11ae"), addrAt("GB", "", "M1 1AE")},
		{"GBPostalSpacing", addrAt("GB", "", "ec1a  1bb"), addrAt("GB", "", "EC1A 1BB")},
		{"NLPostal", addrAt("NL", "", "1234ab"), addrAt("NL", "", "1234 AB")},
		{"IEPostal", addrAt("IE", "", "a65f4e2"), addrAt("IE", "", "A65 F4E2")},
		{"SEPostal", addrAt("SE", "", "11455"), addrAt("SE", "", "114 55")},
		{"SEPostalMisplacedSpace", addrAt("SE", "", "1145 5"), addrAt("SE", "", "114 55")},
		{"USPostalUntouched", addrAt("US", "CA", "94105-1234"), addrAt("US", "CA", "94105-1234")},
		{"CAPostalNonASCIIKeptWhole", addrAt("CA", "ON", "a€bc"), addrAt("CA", "ON", "A€BC")},
		{"PTPostalUntouched", addrAt("PT", "", "1000 001"), addrAt("PT", "", "1000 001")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in
			normalizeAddress(&got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("normalizeAddress(%+v) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	t.Run("Nil", func(t *testing.T) { normalizeAddress(nil) })
}

func TestCheckAddressBounds(t *testing.T) {
	ok := addrAt("DE", "Berlin", "10115")
	with := func(f func(*Address)) *Address { a := ok; f(&a); return &a }
	tests := []struct {
		name string
		addr *Address
		want *addrErr
	}{
		{"OK", &ok, nil},
		{"OK_Nil", nil, nil},
		{"OK_Empty", &Address{}, nil},
		{"OK_200AccentedRunes", with(func(a *Address) { a.Name = strings.Repeat("é", 200) }), nil},
		{"OK_SurroundingNewline", with(func(a *Address) { a.City = "Berlin\n" }), nil},
		{"OK_PaddedToBound", with(func(a *Address) { a.City = "  " + strings.Repeat("x", maxCityLen) + "  " }), nil},
		{"ErrLongName", with(func(a *Address) { a.Name = strings.Repeat("é", 201) }), addrInvalidAt("$.fulfillment_address.name")},
		{"ErrLongLineOne", with(func(a *Address) { a.LineOne = strings.Repeat("x", 201) }), addrInvalidAt("$.fulfillment_address.line_one")},
		{"ErrLongLineTwo", with(func(a *Address) { a.LineTwo = strings.Repeat("x", 201) }), addrInvalidAt("$.fulfillment_address.line_two")},
		{"ErrLongCity", with(func(a *Address) { a.City = strings.Repeat("x", 300) }), addrInvalidAt("$.fulfillment_address.city")},
		{"ErrLongState", with(func(a *Address) { a.State = strings.Repeat("x", 101) }), addrInvalidAt("$.fulfillment_address.state")},
		{"ErrLongCountry", with(func(a *Address) { a.Country = strings.Repeat("x", 101) }), addrInvalidAt("$.fulfillment_address.country")},
		{"ErrLongPostalCode", with(func(a *Address) { a.PostalCode = strings.Repeat("1", 21) }), addrInvalidAt("$.fulfillment_address.postal_code")},
		{"ErrLongPhone", with(func(a *Address) { a.PhoneNumber = strings.Repeat("1", 33) }), addrInvalidAt("$.fulfillment_address.phone_number")},
		{"ErrControlCharacter", with(func(a *Address) { a.City = "Ber\x00lin" }), addrInvalidAt("$.fulfillment_address.city")},
		{"ErrInnerNewline", with(func(a *Address) { a.LineOne = "1 Main St\nRing twice" }), addrInvalidAt("$.fulfillment_address.line_one")},
		{"ErrEscape", with(func(a *Address) { a.Name = "Ada\x1b[31m" }), addrInvalidAt("$.fulfillment_address.name")},
		{"ErrInvalidUTF8", with(func(a *Address) { a.PostalCode = "101\xff5" }), addrInvalidAt("$.fulfillment_address.postal_code")},
		{"ErrFirstFieldWins", with(func(a *Address) { a.Name = "\x00"; a.City = strings.Repeat("x", 300) }), addrInvalidAt("$.fulfillment_address.name")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := addrErrOf(t, checkAddressBounds(tt.addr))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("checkAddressBounds mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckBuyer(t *testing.T) {
	const email, phone = "$.buyer.email", "$.buyer.phone_number"
	buyer := func(mail, tel string) Buyer { return Buyer{Name: "Ada Lovelace", Email: mail, PhoneNumber: tel} }
	tests := []struct {
		name    string
		in      Buyer
		want    Buyer // after normalisation, when no error
		wantErr *addrErr
	}{
		{name: "OK", in: buyer("ada@example.com", ""), want: buyer("ada@example.com", "")},
		{name: "OK_NamesOnly", in: Buyer{FirstName: " Ada ", LastName: "Lovelace", Email: "ada@example.com"},
			want: Buyer{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com"}},
		{name: "OK_DomainLowerCased", in: buyer(" Ada.L@Example.COM ", ""), want: buyer("Ada.L@example.com", "")},
		{name: "OK_PlusAddress", in: buyer("ada+shop@mail.example.co.uk", ""), want: buyer("ada+shop@mail.example.co.uk", "")},
		{name: "OK_Phone", in: buyer("ada@example.com", "+1 (415) 555-0100"), want: buyer("ada@example.com", "+1 (415) 555-0100")},
		{name: "OK_PhoneDots", in: buyer("ada@example.com", " 030.1234.5678 "), want: buyer("ada@example.com", "030.1234.5678")},
		{name: "OK_PhoneFifteenDigits", in: buyer("ada@example.com", "+123456789012345"), want: buyer("ada@example.com", "+123456789012345")},
		{name: "OK_NameAtBound", in: Buyer{Name: strings.Repeat("é", maxNameLen), Email: "a@b.co"}, want: Buyer{Name: strings.Repeat("é", maxNameLen), Email: "a@b.co"}},

		{name: "ErrMissingEmail", in: buyer("", ""), wantErr: &addrErr{"missing", email}},
		{name: "ErrBlankEmail", in: buyer("   ", ""), wantErr: &addrErr{"missing", email}},
		{name: "ErrEmailNoAtSign", in: buyer("no-at-sign", ""), wantErr: addrInvalidAt(email)},
		{name: "ErrEmailNoDotInDomain", in: buyer("a@b", ""), wantErr: addrInvalidAt(email)},
		{name: "ErrEmailDisplayName", in: buyer("Name <a@b.com>", ""), wantErr: addrInvalidAt(email)},
		{name: "ErrEmailAngleBrackets", in: buyer("<a@b.com>", ""), wantErr: addrInvalidAt(email)},
		{name: "ErrEmailComment", in: buyer("a@b.com (Ada)", ""), wantErr: addrInvalidAt(email)},
		{name: "ErrEmailTwoAtSigns", in: buyer("a@b@c.com", ""), wantErr: addrInvalidAt(email)},
		{name: "ErrEmailEmptyLabel", in: buyer("a@b..com", ""), wantErr: addrInvalidAt(email)},
		{name: "ErrEmailTrailingDot", in: buyer("a@b.com.", ""), wantErr: addrInvalidAt(email)},
		{name: "ErrEmailIPLiteral", in: buyer("a@[192.0.2.1]", ""), wantErr: addrInvalidAt(email)},
		{name: "ErrEmailSpace", in: buyer("a b@c.com", ""), wantErr: addrInvalidAt(email)},
		{name: "ErrEmailTooLong", in: buyer(strings.Repeat("a", 288)+"@example.com", ""), wantErr: addrInvalidAt(email)},
		{name: "ErrLongName", in: Buyer{Name: strings.Repeat("x", maxNameLen+1), Email: "a@b.co"}, wantErr: addrInvalidAt("$.buyer.name")},
		{name: "ErrLongFirstName", in: Buyer{FirstName: strings.Repeat("x", maxNameLen+1), Email: "a@b.co"}, wantErr: addrInvalidAt("$.buyer.first_name")},
		{name: "ErrLongLastName", in: Buyer{LastName: strings.Repeat("x", maxNameLen+1), Email: "a@b.co"}, wantErr: addrInvalidAt("$.buyer.last_name")},
		{name: "ErrNameControlCharacter", in: Buyer{Name: "Ada\x07", Email: "a@b.co"}, wantErr: addrInvalidAt("$.buyer.name")},
		{name: "ErrPhoneTooFewDigits", in: buyer("a@b.co", "12"), wantErr: addrInvalidAt(phone)},
		{name: "ErrPhoneWords", in: buyer("a@b.co", "call me"), wantErr: addrInvalidAt(phone)},
		{name: "ErrPhoneTwoPlusSigns", in: buyer("a@b.co", "++1 415 555 0100"), wantErr: addrInvalidAt(phone)},
		{name: "ErrPhoneInnerPlus", in: buyer("a@b.co", "1+415 555 0100"), wantErr: addrInvalidAt(phone)},
		{name: "ErrPhoneSixteenDigits", in: buyer("a@b.co", "+1234567890123456"), wantErr: addrInvalidAt(phone)},
		{name: "ErrPhoneTooLong", in: buyer("a@b.co", "+1 "+strings.Repeat("- ", 20)+"415 555 0100"), wantErr: addrInvalidAt(phone)},
		{name: "ErrPhoneExtension", in: buyer("a@b.co", "415 555 0100 ext 12"), wantErr: addrInvalidAt(phone)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in
			err := addrErrOf(t, checkBuyer(&got))
			if diff := cmp.Diff(tt.wantErr, err); diff != "" {
				t.Fatalf("checkBuyer(%+v) error mismatch (-want +got):\n%s", tt.in, diff)
			}
			if err == nil {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("checkBuyer(%+v) buyer mismatch (-want +got):\n%s", tt.in, diff)
				}
			}
		})
	}
	t.Run("OK_Nil", func(t *testing.T) {
		if err := checkBuyer(nil); err != nil {
			t.Errorf("checkBuyer(nil) = %v, want nil", err)
		}
	})
}

func TestCheckMetadata(t *testing.T) {
	keys := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("key_%02d", i)] = "v"
		}
		return m
	}
	// total is metadata of n bytes of keys and values in all, each within
	// its own bounds.
	total := func(n int) map[string]string {
		m := map[string]string{}
		for i := 0; n > 0; i++ {
			k := fmt.Sprintf("k%02d", i)
			v := strings.Repeat("v", min(maxMetadataValueLen, n-len(k)))
			m[k] = v
			n -= len(k) + len(v)
		}
		return m
	}
	tests := []struct {
		name string
		in   map[string]string
		want *addrErr
	}{
		{"OK_Nil", nil, nil},
		{"OK_Empty", map[string]string{}, nil},
		{"OK", map[string]string{"order_ref": "A-1", "gift_note": "Happy birthday! Love, Ada", "empty": "", "acp:host.ref-2": "x"}, nil},
		{"OK_MaxKeys", keys(maxMetadataKeys), nil},
		{"OK_KeyAtBound", map[string]string{strings.Repeat("k", maxMetadataKeyLen): "v"}, nil},
		{"OK_ValueAtBound", map[string]string{"note": strings.Repeat("é", maxMetadataValueLen)}, nil},
		{"ErrTooManyKeys", keys(maxMetadataKeys + 1), addrInvalidAt("$.metadata")},
		{"ErrEmptyKey", map[string]string{"": "v"}, addrInvalidAt("$.metadata")},
		{"ErrLongKey", map[string]string{strings.Repeat("k", maxMetadataKeyLen+1): "v"}, addrInvalidAt("$.metadata")},
		{"ErrKeyControlCharacter", map[string]string{"a\x00b": "v"}, addrInvalidAt("$.metadata")},
		{"ErrKeySurroundingSpace", map[string]string{" ref": "v"}, addrInvalidAt("$.metadata")},
		{"ErrLongValue", map[string]string{"note": strings.Repeat("x", maxMetadataValueLen+1)}, addrInvalidAt("$.metadata.note")},
		{"ErrLongValueOddKey", map[string]string{"1st.note": strings.Repeat("x", maxMetadataValueLen+1)}, addrInvalidAt(`$.metadata['1st.note']`)},
		{"ErrKeySpace", map[string]string{"gift note": "v"}, addrInvalidAt("$.metadata")},
		{"ErrKeyQuote", map[string]string{"it's": "v"}, addrInvalidAt("$.metadata")},
		{"ErrKeyAccent", map[string]string{"café": "v"}, addrInvalidAt("$.metadata")},
		{"ErrValueNewline", map[string]string{"note": "Happy birthday!\nLove, Ada"}, addrInvalidAt("$.metadata.note")},
		{"ErrValueTab", map[string]string{"note": "a\tb"}, addrInvalidAt("$.metadata.note")},
		{"ErrValueOverride", map[string]string{"ref": "abc\u202Edcba"}, addrInvalidAt("$.metadata.ref")},
		{"OK_AtTotalBound", total(maxMetadataBytes), nil},
		{"ErrTotalTooLarge", total(maxMetadataBytes + 1), addrInvalidAt("$.metadata")},
		{"ErrInvalidUTF8Value", map[string]string{"note": "\xff"}, addrInvalidAt("$.metadata.note")},
		{"ErrFirstKeyInOrder", map[string]string{"b": strings.Repeat("x", 501), "a": strings.Repeat("x", 501)}, addrInvalidAt("$.metadata.a")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := addrErrOf(t, checkMetadata(tt.in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("checkMetadata mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
