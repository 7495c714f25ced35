package checkout

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPolicyEmails(t *testing.T) {
	demo, err := LoadPolicyFile(os.DirFS("../testdata/demo"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if demo.Emails.From != "Northwind Goods <orders@northwind.example>" || demo.Emails.Support != "help@northwind.example" {
		t.Fatalf("the demo's emails: %+v", demo.Emails)
	}
	for _, tt := range []struct {
		name string
		in   Emails
		want []string
	}{
		{"OK", Emails{From: "Shop <a@example.com>", Support: "help@example.com", StaffCopy: "desk@example.com"}, nil},
		{"None", Emails{}, nil},
		{"ErrNoFrom", Emails{Support: "help@example.com"},
			[]string{`emails.from: missing; the shop sends emails only from an address, such as "Northwind Goods <orders@example.com>"`}},
		{"ErrNoSupport", Emails{From: "a@example.com"},
			[]string{"emails.support: missing; send the address buyers' replies go to, such as help@example.com"}},
		{"ErrBadAddress", Emails{From: "a@example.com", Support: "help at example.com"},
			[]string{`emails.support: must be an email address such as help@example.com or "Northwind Goods <help@example.com>" (got "help at example.com")`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var v validator
			v.emails(tt.in)
			var got []string
			for _, e := range v.errs {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
