package orders

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ReturnPolicy is the merchant's return policy (the policy file's
// `returns:` key, docs/returns.md): how long buyers may return what
// shipped, what they cannot return, what the return shipping costs them,
// where the parcel goes and whether returned units go back on sale.
type ReturnPolicy struct {
	// WindowDays is how many days after delivery (or, with no delivery
	// recorded, after the last shipment) a return may be requested; nil
	// means DefaultReturnWindowDays, 0 takes no returns.
	WindowDays *int `yaml:"window_days"`
	// ShippingFee is deducted from each return's refund (minor units): the
	// buyer pays the return shipping. 0, the default: returns are free.
	ShippingFee int64 `yaml:"shipping_fee"`
	// NotReturnable names what cannot be returned.
	NotReturnable NotReturnable `yaml:"not_returnable"`
	// Address is where returned parcels go, one line each.
	Address []string `yaml:"address"`
	// Instructions say how to pack and send the parcel.
	Instructions string `yaml:"instructions"`
	// Restock puts returned units back on sale when their refund goes
	// through; nil means yes.
	Restock *bool `yaml:"restock"`
}

// NotReturnable lists the products and categories that cannot be returned.
type NotReturnable struct {
	// Products are product ids (or variant ids).
	Products []string `yaml:"products"`
	// Categories are catalog categories, as search_products shows them.
	Categories []string `yaml:"categories"`
}

// ReturnPagePath is where the shop serves the return policy page it makes
// from the policy, for a merchant whose links name no page of their own.
const ReturnPagePath = "/policies/returns"

// Bounds of the return policy, as the policy file's validation checks them.
const (
	DefaultReturnWindowDays = 30
	MaxReturnWindowDays     = 365
	MaxReturnInstructions   = 2000
	MaxReturnAddressLines   = 8
	MaxReturnAddressLine    = 200
)

// Window is the return window in days.
func (p ReturnPolicy) Window() int {
	if p.WindowDays == nil {
		return DefaultReturnWindowDays
	}
	return *p.WindowDays
}

// restocks reports whether returned units go back on sale.
func (p ReturnPolicy) restocks() bool { return p.Restock == nil || *p.Restock }

// excluded reports whether a variant of a product in a category cannot be
// returned.
func (p ReturnPolicy) excluded(variantID, productID, category string) bool {
	n := p.NotReturnable
	return slices.Contains(n.Products, variantID) || (productID != "" && slices.Contains(n.Products, productID)) ||
		(category != "" && slices.ContainsFunc(n.Categories, func(c string) bool { return strings.EqualFold(c, category) }))
}

// Problems lists what is wrong with the policy, each as the key under
// `returns.` and what to write instead.
func (p ReturnPolicy) Problems() map[string]string {
	out := map[string]string{}
	if w := p.Window(); w < 0 || w > MaxReturnWindowDays {
		out["window_days"] = fmt.Sprintf("must be a whole number of days from 0 (no returns) to %d (got %d)", MaxReturnWindowDays, w)
	}
	if p.ShippingFee < 0 {
		out["shipping_fee"] = fmt.Sprintf("must be a whole number of minor units ≥ 0 (got %d)", p.ShippingFee)
	}
	if len(p.Address) > MaxReturnAddressLines {
		out["address"] = fmt.Sprintf("at most %d lines (got %d)", MaxReturnAddressLines, len(p.Address))
	}
	for i, l := range p.Address {
		if strings.TrimSpace(l) == "" || len(l) > MaxReturnAddressLine {
			out[fmt.Sprintf("address[%d]", i)] = fmt.Sprintf("must be a line of text of at most %d characters", MaxReturnAddressLine)
		}
	}
	if len(p.Instructions) > MaxReturnInstructions {
		out["instructions"] = fmt.Sprintf("at most %d characters (got %d)", MaxReturnInstructions, len(p.Instructions))
	}
	for _, l := range []struct {
		key  string
		list []string
	}{{"not_returnable.products", p.NotReturnable.Products}, {"not_returnable.categories", p.NotReturnable.Categories}} {
		for i, s := range l.list {
			if strings.TrimSpace(s) == "" || len(s) > 100 {
				out[fmt.Sprintf("%s[%d]", l.key, i)] = "must be a name of at most 100 characters"
			}
		}
	}
	return out
}

// Summary is the policy in one paragraph for buyers and agents (UCP's
// return policy description, the generated return page, tool texts);
// format formats amounts in the shop's currency.
func (p ReturnPolicy) Summary(format func(int64) string) string {
	w := p.Window()
	if w == 0 {
		return "This shop does not take returns through the chat; contact support."
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Items can be returned within %d days of delivery (or of shipping, when no delivery is recorded).", w)
	if p.ShippingFee > 0 {
		fmt.Fprintf(&sb, " Return shipping costs %s, deducted from the refund.", format(p.ShippingFee))
	} else {
		sb.WriteString(" Return shipping is free.")
	}
	if n := p.NotReturnable; len(n.Products)+len(n.Categories) > 0 {
		sb.WriteString(" Not returnable:")
		if len(n.Categories) > 0 {
			fmt.Fprintf(&sb, " items in %s", strings.Join(n.Categories, ", "))
		}
		if len(n.Products) > 0 {
			if len(n.Categories) > 0 {
				sb.WriteString(";")
			}
			fmt.Fprintf(&sb, " products %s", strings.Join(n.Products, ", "))
		}
		sb.WriteString(".")
	}
	sb.WriteString(" The refund goes to the card paid with once the parcel is received.")
	return sb.String()
}

// instructions say how to send a return's parcel: the policy's text and
// the address.
func (p ReturnPolicy) instructions() string {
	s := strings.TrimSpace(p.Instructions)
	if len(p.Address) > 0 {
		if s != "" {
			s += " "
		}
		s += "Send the parcel to: " + strings.Join(p.Address, ", ") + "."
	}
	if s == "" {
		s = "The shop's support will tell you where to send the parcel."
	}
	return s
}

// windowEnd is when the window of an order delivered at delivered (or,
// with none, last shipped at shipped) ends; zero when nothing shipped.
func (p ReturnPolicy) windowEnd(delivered *time.Time, shipped time.Time) time.Time {
	start := shipped
	if delivered != nil && !delivered.IsZero() {
		start = *delivered
	}
	if start.IsZero() {
		return time.Time{}
	}
	return start.Add(time.Duration(p.Window()) * 24 * time.Hour)
}
