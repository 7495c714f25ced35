package purchase

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
)

// Env is what `shop purchase` takes from the program that runs it.
type Env struct {
	// Stdout receives the report.
	Stdout io.Writer
	// Getenv reads the environment (STRIPE_SECRET_KEY, SHOP_ADMIN_TOKEN).
	Getenv func(string) string
	// Version is the program's, sent in the MCP initialize request.
	Version string
	// SPTVersion is Options.SPTVersion: the Stripe-Version the shop charges
	// shared payment tokens with.
	SPTVersion string
	// Usage reports a command line the command cannot take (problem says
	// why) and returns the error Command and ParseArgs answer.
	Usage func(problem string) error
}

// Command is `shop purchase`: its flags and the environment into Options,
// the run, and its report on env.Stdout, a line per step or, with --json, a
// JSON Report after them. It answers ErrFailed when a check did not hold,
// and env.Usage's error when the command line cannot be taken.
func Command(ctx context.Context, args []string, env Env) error {
	o, err := ParseArgs(args, env)
	if err != nil {
		return err
	}
	rep := Run(ctx, o, env.Stdout)
	if o.JSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
	if !rep.OK {
		return ErrFailed
	}
	return nil
}

// ParseArgs reads the flags of `shop purchase` and the environment into
// Options; a command line it cannot take answers env.Usage's error.
func ParseArgs(args []string, env Env) (Options, error) {
	o := Options{
		StripeKey: env.Getenv("STRIPE_SECRET_KEY"), StripeAPI: DefaultStripeAPI,
		SPTVersion: env.SPTVersion, Version: env.Version, Address: DefaultAddress,
		AdminToken: env.Getenv("SHOP_ADMIN_TOKEN"),
	}
	var address string
	fs := flag.NewFlagSet("shop purchase", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.URL, "url", DefaultURL, "the shop's MCP endpoint")
	fs.IntVar(&o.Items, "items", 1, "how many lines to buy")
	fs.StringVar(&o.Promo, "promo", "", "a promotion code to apply")
	fs.BoolVar(&o.Decline, "decline", false, "pay with a declined card first")
	fs.BoolVar(&o.Link, "link", false, "pay on the payment page of create_payment_link instead of through complete_checkout")
	fs.BoolVar(&o.JSON, "json", false, "print a JSON report")
	fs.BoolVar(&o.Live, "live", false, "run against a live-mode shop")
	fs.DurationVar(&o.Timeout, "timeout", DefaultTimeout, "the whole run's time limit")
	fs.BoolVar(&o.Account, "account", false, "link the buyer's account first (OAuth with the shop's login pages) and buy with its token")
	fs.StringVar(&o.SMTPCapture, "smtp-capture", "", "with --account: listen for the shop's emails here (the shop's SHOP_SMTP_URL=smtp://ADDR?tls=none)")
	fs.BoolVar(&o.Return, "return", false, "after the purchase, return the whole order: staff ship and accept it with the owner token in SHOP_ADMIN_TOKEN")
	fs.StringVar(&address, "address", "", "the address to ship to, as the contract's Address JSON")
	bad := func(format string, a ...any) (Options, error) {
		return o, env.Usage(fmt.Sprintf(format, a...))
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
		a, err := ParseAddress(address)
		if err != nil {
			return bad("--address: %v", err)
		}
		o.Address = a
	}
	return o, nil
}
