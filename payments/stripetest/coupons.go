package stripetest

import (
	"net/http"
	"net/url"
	"strconv"
)

type coupon struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	AmountOff        *int64            `json:"amount_off"`
	Created          int64             `json:"created"`
	Currency         *string           `json:"currency"`
	Duration         string            `json:"duration"`
	DurationInMonths *int64            `json:"duration_in_months"`
	Livemode         bool              `json:"livemode"`
	MaxRedemptions   *int64            `json:"max_redemptions"`
	Metadata         map[string]string `json:"metadata"`
	Name             *string           `json:"name"`
	PercentOff       *float64          `json:"percent_off"`
	RedeemBy         *int64            `json:"redeem_by"`
	TimesRedeemed    int64             `json:"times_redeemed"`
	Valid            bool              `json:"valid"`
}

func (s *Server) createCoupon(form url.Values) answer {
	c := &coupon{Object: "coupon", Created: s.now().Unix(), Duration: "once", Metadata: params(form, "metadata"), Valid: true}
	if id := form.Get("id"); id != "" {
		if s.coupons[id] != nil {
			return invalid("resource_already_exists", "id", "Coupon already exists.")
		}
		c.ID = id
	} else {
		c.ID = s.randID("", 8)
	}
	if v := form.Get("amount_off"); v != "" {
		n, bad := positive(form, "amount_off")
		if bad != nil {
			return *bad
		}
		c.AmountOff = &n
		cur := form.Get("currency")
		if cur == "" {
			return invalid("parameter_missing", "currency", "You must pass currency when passing amount_off.")
		}
		c.Currency = &cur
	}
	if v := form.Get("percent_off"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || f > 100 {
			return invalid("parameter_invalid_float", "percent_off", "Invalid percent_off: must be more than 0 and at most 100.")
		}
		c.PercentOff = &f
	}
	if (c.AmountOff == nil) == (c.PercentOff == nil) {
		return invalid("", "", "You must pass exactly one of amount_off or percent_off.")
	}
	switch d := form.Get("duration"); d {
	case "", "once", "forever", "repeating":
		if d != "" {
			c.Duration = d
		}
	default:
		return invalid("", "duration", "Invalid duration: must be one of once, repeating, or forever.")
	}
	if form.Has("max_redemptions") {
		n, bad := positive(form, "max_redemptions")
		if bad != nil {
			return *bad
		}
		c.MaxRedemptions = &n
	}
	if name := form.Get("name"); name != "" {
		c.Name = &name
	}
	s.coupons[c.ID] = c
	return jsonAnswer(http.StatusOK, c)
}
