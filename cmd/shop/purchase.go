package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"shop/payments"
	"shop/purchase"
)

// purchase is `shop purchase`: its flags and environment into
// purchase.Options, the run, and its report.
func (m *Main) purchase(ctx context.Context, args []string) error {
	o, err := m.purchaseOptions(args)
	if err != nil {
		return err
	}
	rep := purchase.Run(ctx, o, m.Stdout)
	if o.JSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
	if !rep.OK {
		return purchase.ErrFailed
	}
	return nil
}

// purchaseOptions reads the flags of `shop purchase` and the environment;
// a command line it cannot take prints the usage and answers errUsage.
func (m *Main) purchaseOptions(args []string) (purchase.Options, error) {
	o := purchase.Options{
		StripeKey: m.Getenv("STRIPE_SECRET_KEY"), StripeAPI: purchase.DefaultStripeAPI,
		SPTVersion: payments.DefaultSPTVersion, Version: version(), Address: purchase.DefaultAddress,
	}
	var address string
	fs := flag.NewFlagSet("shop purchase", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.URL, "url", purchase.DefaultURL, "the shop's MCP endpoint")
	fs.IntVar(&o.Items, "items", 1, "how many lines to buy")
	fs.StringVar(&o.Promo, "promo", "", "a promotion code to apply")
	fs.BoolVar(&o.Decline, "decline", false, "pay with a declined card first")
	fs.BoolVar(&o.Link, "link", false, "pay on the payment page of create_payment_link instead of through complete_checkout")
	fs.BoolVar(&o.JSON, "json", false, "print a JSON report")
	fs.BoolVar(&o.Live, "live", false, "run against a live-mode shop")
	fs.DurationVar(&o.Timeout, "timeout", purchase.DefaultTimeout, "the whole run's time limit")
	fs.StringVar(&address, "address", "", "the address to ship to, as the contract's Address JSON")
	bad := func(format string, a ...any) (purchase.Options, error) {
		fmt.Fprintf(m.Stderr, "shop purchase: "+format+"\n\n%s", append(a, usage)...)
		return o, errUsage
	}
	if err := fs.Parse(args); err != nil {
		return bad("%v", err)
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	if err := o.Validate(); err != nil {
		return bad("%v", err)
	}
	if address != "" {
		a, err := purchase.ParseAddress(address)
		if err != nil {
			return bad("--address: %v", err)
		}
		o.Address = a
	}
	return o, nil
}
