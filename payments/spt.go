package payments

import (
	"fmt"
	"regexp"
)

// The shapes of StripeOptions.SPTParam (a form key, such as
// payment_method_data[shared_payment_granted_token]) and SPTVersion (a
// dated Stripe API version, such as 2026-04-22.preview).
var (
	sptParamPattern   = regexp.MustCompile(`^[a-z_]{1,64}(\[[a-z_]{1,64}\]){0,4}$`)
	sptVersionPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(\.[a-z]{1,32})?$`)
)

// CheckSPT checks STRIPE_SPT_PARAM and STRIPE_SPT_VERSION, StripeOptions'
// SPTParam and SPTVersion, which are "" (the defaults) or have the shapes of
// a Stripe form parameter and of a Stripe API version; the error names the
// variable and what to send.
func CheckSPT(param, version string) error {
	if param != "" && !sptParamPattern.MatchString(param) {
		return fmt.Errorf("STRIPE_SPT_PARAM %q: send a Stripe form parameter such as %s", param, DefaultSPTParam)
	}
	if version != "" && !sptVersionPattern.MatchString(version) {
		return fmt.Errorf("STRIPE_SPT_VERSION %q: send a Stripe API version such as %s", version, DefaultSPTVersion)
	}
	return nil
}
