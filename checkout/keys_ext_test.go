package checkout_test

import (
	"github.com/google/go-cmp/cmp/cmpopts"

	"shop/checkout"
)

// withoutKeys compares messages by what they say to the model, for the
// tests written before messages had keys; checkout's TestMessageKeys and
// the tests that name keys check those.
var withoutKeys = cmpopts.IgnoreFields(checkout.Message{}, "Key", "Params")
