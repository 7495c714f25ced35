package checkout

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// TestPolicySheet: the payment sheet is off unless the policy enables it
// (the demo's is off), and its merchant ids and wallets are checked.
func TestPolicySheet(t *testing.T) {
	demo, err := LoadPolicyFile(os.DirFS("../testdata/demo"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if demo.SheetEnabled() {
		t.Error("the demo policy enables the payment sheet; buyers must pay on the payment page by default")
	}
	if got := demo.sheetMerchantID(); got != demo.MerchantID {
		t.Errorf("merchant id %q, want the policy's %q when the sheet names none", got, demo.MerchantID)
	}

	raw, err := os.ReadFile("../testdata/demo/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	on := strings.Replace(string(raw), "  enabled: false\n", "  enabled: true\n  test_merchant_id: acct_test_1\n  live_merchant_id: acct_live_1\n  wallets: [apple_pay, google_pay]\n", 1)
	fsys := fstest.MapFS{"policy.yaml": {Data: []byte(on)}}
	for _, f := range []string{"terms", "privacy", "returns", "support"} {
		fsys["static/legal/"+f+".html"] = &fstest.MapFile{Data: []byte("<p>" + f)}
	}
	p, err := LoadPolicyFile(fsys, "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !p.SheetEnabled() || p.sheetMerchantID() != "acct_test_1" {
		t.Errorf("enabled %v, merchant id %q; want the sheet on with the test id", p.SheetEnabled(), p.sheetMerchantID())
	}
	p.PaymentMode = PaymentLive
	if got := p.sheetMerchantID(); got != "acct_live_1" {
		t.Errorf("live merchant id %q", got)
	}
	p.ExternalCheckout = true
	if p.SheetEnabled() {
		t.Error("external_checkout: true leaves the sheet on")
	}

	for _, tt := range []struct {
		name string
		in   PaymentSheet
		want []string
	}{
		{"OK", PaymentSheet{Enabled: true, Wallets: []string{"google_pay"}}, nil},
		{"ErrWallet", PaymentSheet{Wallets: []string{"paypal"}}, []string{`payment_sheet.wallets[0]: must be apple_pay or google_pay (got "paypal")`}},
		{"ErrTwice", PaymentSheet{Wallets: []string{"apple_pay", "apple_pay"}}, []string{"payment_sheet.wallets[1]: apple_pay is listed twice"}},
		{"ErrLong", PaymentSheet{TestMerchantID: strings.Repeat("a", 201)}, []string{"payment_sheet.test_merchant_id: must be at most 200 characters (got 201)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var v validator
			v.paymentSheet(tt.in)
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
