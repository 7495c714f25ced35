package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"shop/checkout"
)

// Config is everything the shop reads from flags and the environment; no
// other package reads either.
type Config struct {
	Addr       string
	DB         string
	PolicyFile string // "" selects the built-in demo merchant
	PublicURL  string

	TrustedOrigins []string
	// SessionTTL is how long a checkout session holds its stock after its
	// last change.
	SessionTTL time.Duration

	StripeSecretKey     string
	StripeWebhookSecret string
	AdminTokens         string
	ReceiptKey          string
}

// Defaults of the command line.
const (
	DefaultAddr = "127.0.0.1:8000"
	DefaultDB   = "shop.db"
)

// parseFlags reads a subcommand's flags and the environment into a Config.
// withAddr adds --addr; positional receives the arguments left after flags.
func (m *Main) parseFlags(name string, args []string, withAddr bool, positional *[]string) (*Config, error) {
	cfg := &Config{}
	fs := flag.NewFlagSet("shop "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if withAddr {
		fs.StringVar(&cfg.Addr, "addr", DefaultAddr, "listen address")
	}
	fs.StringVar(&cfg.DB, "db", DefaultDB, "SQLite file path or postgres:// URL")
	fs.StringVar(&cfg.PolicyFile, "config", "", "merchant policy YAML file")
	origins := fs.String("trusted-origins", "", "comma-separated browser origins allowed to call /mcp")
	fs.DurationVar(&cfg.SessionTTL, "session-ttl", checkout.DefaultTTL, "how long a checkout session holds its stock after its last change")
	// Flags may come before or after the positional arguments.
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			fmt.Fprintf(m.Stderr, "shop %s: %v\n\n%s", name, err, usage)
			return nil, errUsage
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if positional != nil {
		*positional = rest
	} else if len(rest) > 0 {
		fmt.Fprintf(m.Stderr, "shop %s: unexpected argument %q\n\n%s", name, rest[0], usage)
		return nil, errUsage
	}
	if *origins != "" {
		cfg.TrustedOrigins = strings.Split(*origins, ",")
	}
	cfg.PublicURL = strings.TrimRight(m.Getenv("SHOP_PUBLIC_URL"), "/")
	cfg.StripeSecretKey = m.Getenv("STRIPE_SECRET_KEY")
	cfg.StripeWebhookSecret = m.Getenv("STRIPE_WEBHOOK_SECRET")
	cfg.AdminTokens = m.Getenv("SHOP_ADMIN_TOKENS")
	cfg.ReceiptKey = m.Getenv("SHOP_RECEIPT_KEY")
	if withAddr {
		if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
			return nil, fmt.Errorf("--addr %q: send host:port, such as 127.0.0.1:8000 or :8000", cfg.Addr)
		}
	}
	if cfg.SessionTTL < time.Minute || cfg.SessionTTL > 24*time.Hour {
		return nil, fmt.Errorf("--session-ttl %s: send a duration from 1m to 24h, such as 30m", cfg.SessionTTL)
	}
	if cfg.DB == "" {
		return nil, errors.New("--db: send a SQLite file path or a postgres:// URL")
	}
	return cfg, nil
}

// paymentProvider names the payment provider the configuration selects and
// checks that the Stripe key's mode agrees with the policy's payment mode.
func paymentProvider(cfg *Config, mode string) (string, error) {
	key := cfg.StripeSecretKey
	switch {
	case key == "":
		if mode == "live" {
			return "", errors.New("payment_mode is live but STRIPE_SECRET_KEY is unset; set a live key or use payment_mode: test")
		}
		return "sandbox (simulated payments, test mode)", nil
	case strings.HasPrefix(key, "sk_test_") || strings.HasPrefix(key, "rk_test_"):
		if mode == "live" {
			return "", errors.New("payment_mode is live but STRIPE_SECRET_KEY is a test key")
		}
		return "stripe (test mode)", nil
	case strings.HasPrefix(key, "sk_live_") || strings.HasPrefix(key, "rk_live_"):
		if mode != "live" {
			return "", errors.New("STRIPE_SECRET_KEY is a live key but the policy's payment_mode is test; use a sk_test_ key, or set payment_mode: live")
		}
		return "stripe (live mode)", nil
	default:
		return "", errors.New("STRIPE_SECRET_KEY: not a Stripe secret key (sk_test_… or sk_live_…)")
	}
}
