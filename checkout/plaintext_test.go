package checkout

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRefusesControlAndBidi: every name, address field, email and metadata
// value refuses control characters (Unicode Cc) and bidirectional
// overrides and isolates, with the field's JSONPath and a message that says
// what to send; right-to-left text itself is welcome.
func TestRefusesControlAndBidi(t *testing.T) {
	bad := map[string]string{
		"NUL": "\x00", "Tab": "\t", "Newline": "\n", "Escape": "\x1b", "DEL": "\x7f", "NEL": "\u0085",
		"LRE": "\u202A", "RLE": "\u202B", "PDF": "\u202C", "LRO": "\u202D", "RLO": "\u202E",
		"LRI": "\u2066", "RLI": "\u2067", "FSI": "\u2068", "PDI": "\u2069",
	}
	// fields are the inputs checked, each with how to put s into one and
	// the check that refuses it.
	type field struct {
		param string
		check func(s string) error
	}
	addr := func(set func(*Address, string)) func(string) error {
		return func(s string) error {
			a := addrAt("DE", "Berlin", "10115")
			set(&a, s)
			return checkAddressBounds(&a)
		}
	}
	buyer := func(set func(*Buyer, string)) func(string) error {
		return func(s string) error {
			b := Buyer{Name: "Ada Lovelace", Email: "ada@example.com"}
			set(&b, s)
			return checkBuyer(&b)
		}
	}
	fields := []field{
		{"$.buyer.name", buyer(func(b *Buyer, s string) { b.Name = s })},
		{"$.buyer.first_name", buyer(func(b *Buyer, s string) { b.FirstName = s })},
		{"$.buyer.last_name", buyer(func(b *Buyer, s string) { b.LastName = s })},
		{"$.buyer.email", buyer(func(b *Buyer, s string) { b.Email = strings.Replace(s, "X", "ada", 1) + "@example.com" })},
		{"$.metadata.note", func(s string) error { return checkMetadata(map[string]string{"note": s, "ref": "A-1"}) }},
	}
	for _, f := range addressFields {
		fields = append(fields, field{addressParam(f.key), addr(func(a *Address, s string) { *f.get(a) = s })})
	}
	for _, f := range fields {
		t.Run(f.param, func(t *testing.T) {
			// Right-to-left text and accents are plain text.
			for _, ok := range []string{"Xمرحبا", "Xשלום", "XRenée"} {
				if f.param == "$.buyer.email" || f.param == "$.fulfillment_address.postal_code" || f.param == "$.fulfillment_address.phone_number" {
					break // shapes of their own, checked elsewhere
				}
				if err := f.check(ok); err != nil {
					t.Errorf("%q refused: %v", ok, err)
				}
			}
			for name, r := range bad {
				t.Run(name, func(t *testing.T) {
					got := addrErrOf(t, f.check("X"+r+"Y"))
					if diff := cmp.Diff(addrInvalidAt(f.param), got); diff != "" {
						t.Fatalf("%U inside: (-want +got):\n%s", []rune(r)[0], diff)
					}
					msg := fmt.Sprint(f.check("X" + r + "Y"))
					if !strings.Contains(msg, "send it") {
						t.Errorf("message %q does not say what to send", msg)
					}
				})
			}
		})
	}
}
