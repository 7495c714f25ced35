package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"shop"
	"shop/feed"
	"shop/server"
)

// TestConfigAdminTokens: SHOP_ADMIN_TOKENS is read once, at config time,
// into hashes; the Config keeps no copy of the variable or of a token.
func TestConfigAdminTokens(t *testing.T) {
	env := map[string]string{"SHOP_ADMIN_TOKENS": "owner:" + ownerToken + ",viewer:" + viewerToken}
	m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }, Logger: slog.New(slog.DiscardHandler)}
	cfg, err := m.parseFlags("serve", []string{"--addr", "127.0.0.1:0"}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.AdminTokens) != 2 || cfg.AdminTokens[0].Actor.Role != shop.Owner || cfg.AdminTokens[1].Actor.Role != shop.Viewer {
		t.Fatalf("admin tokens %+v", cfg.AdminTokens)
	}
	// Every string the Config holds, however deep, and its printed forms.
	var texts []string
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			texts = append(texts, v.String())
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 && v.Kind() == reflect.Slice {
				texts = append(texts, string(v.Bytes()))
				return
			}
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		}
	}
	walk(reflect.ValueOf(cfg).Elem())
	texts = append(texts, fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg))
	for _, s := range texts {
		for _, secret := range []string{ownerToken, viewerToken, ownerToken[:12]} {
			if strings.Contains(s, secret) {
				t.Errorf("the config keeps a token in %q", s)
			}
		}
	}

	// Subcommands without /admin/mcp neither read nor check it.
	env["SHOP_ADMIN_TOKENS"] = "root:" + ownerToken
	if cfg, err := m.parseFlags("migrate", nil, false, nil); err != nil || cfg.AdminTokens != nil {
		t.Errorf("migrate with bad admin tokens: %v, %v", cfg, err)
	}
}

// TestConfigAdminTokensRefused: serve refuses a bad SHOP_ADMIN_TOKENS
// before it listens, with ParseAdminTokens' message.
func TestConfigAdminTokensRefused(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"root:" + ownerToken, "SHOP_ADMIN_TOKENS: entry 1: the role (before the colon) is not viewer, support or owner"},
		{"owner:short", "SHOP_ADMIN_TOKENS: entry 1: the token is too short; use at least 24 random characters"},
		{"owner:" + ownerToken + ",owner:", "SHOP_ADMIN_TOKENS: entry 2: the token is empty"},
		{"owner:" + ownerToken + ",viewer:" + ownerToken, "SHOP_ADMIN_TOKENS: entry 2 has the same token as entry 1"},
		{ownerToken, "SHOP_ADMIN_TOKENS: entry 1 is not role:token"},
	} {
		started := false
		m := &Main{
			Stdout: io.Discard, Stderr: io.Discard, Logger: slog.New(slog.DiscardHandler),
			Getenv:  func(k string) string { return map[string]string{"SHOP_ADMIN_TOKENS": tc.env}[k] },
			Started: func(string) { started = true },
		}
		err := m.Run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--db", t.TempDir() + "/shop.db"})
		if err == nil || !strings.Contains(err.Error(), tc.want) || started {
			t.Errorf("SHOP_ADMIN_TOKENS=%s: %v (started %t); want %q", tc.env, err, started, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), ownerToken) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
}

// TestConfigSharedPaymentTokens: STRIPE_SPT_PARAM and STRIPE_SPT_VERSION
// reach the config when they have the shape of a Stripe form parameter and
// API version, and stop the command with the variable named otherwise.
func TestConfigSharedPaymentTokens(t *testing.T) {
	tests := []struct {
		name, param, version string
		wantErr              string
	}{
		{name: "defaults"},
		{name: "both", param: "payment_method_data[shared_payment_token]", version: "2026-09-30.preview"},
		{name: "dated version", version: "2026-09-30"},
		{name: "ErrParamShape", param: "payment_method_data[shared payment token]", wantErr: "STRIPE_SPT_PARAM"},
		{name: "ErrParamUnclosed", param: "payment_method_data[token", wantErr: "STRIPE_SPT_PARAM"},
		{name: "ErrVersionShape", version: "latest", wantErr: "STRIPE_SPT_VERSION"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"STRIPE_SPT_PARAM": tc.param, "STRIPE_SPT_VERSION": tc.version}
			m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }, Logger: slog.New(slog.DiscardHandler)}
			cfg, err := m.parseFlags("serve", []string{"--addr", "127.0.0.1:0"}, true, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "send") {
					t.Fatalf("err %v, want one naming %s and what to send", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Stripe.SPTParam != tc.param || cfg.Stripe.SPTVersion != tc.version {
				t.Errorf("config %q %q, want %q %q", cfg.Stripe.SPTParam, cfg.Stripe.SPTVersion, tc.param, tc.version)
			}
		})
	}
}

// TestConfigRateLimits: the rate-limit flags (and the feed's refresh)
// default to the server's (and the feed's) defaults, and values that would refuse everyone or name no client are
// refused at start, saying what to send.
func TestConfigRateLimits(t *testing.T) {
	m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }, Logger: slog.New(slog.DiscardHandler)}
	cfg, err := m.parseFlags("serve", []string{"--addr", "127.0.0.1:0"}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RateLimit != server.DefaultRateLimit || cfg.RateBurst != server.DefaultRateBurst ||
		cfg.PersonRateLimit != server.DefaultPersonRateLimit || cfg.PersonRateBurst != server.DefaultPersonRateBurst ||
		cfg.AddressRateLimit != server.DefaultAddressRateLimit || cfg.AddressRateBurst != server.DefaultAddressRateBurst ||
		cfg.TrustedProxyHops != 1 || cfg.ClientIPHeader != "" || cfg.FeedRefresh != feed.DefaultRefresh {
		t.Errorf("defaults %+v", cfg)
	}
	cfg, err = m.parseFlags("serve", []string{"--rate-limit", "5", "--rate-burst", "9", "--person-rate-limit", "0.5", "--person-rate-burst", "60", "--address-rate-limit", "-1",
		"--address-rate-burst", "7", "--client-ip-header", "X-Forwarded-For", "--trusted-proxy-hops", "2"}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RateLimit != 5 || cfg.RateBurst != 9 || cfg.AddressRateLimit != -1 || cfg.AddressRateBurst != 7 ||
		cfg.PersonRateLimit != 0.5 || cfg.PersonRateBurst != 60 ||
		cfg.ClientIPHeader != "X-Forwarded-For" || cfg.TrustedProxyHops != 2 {
		t.Errorf("flags %+v", cfg)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate-limit", "0"}, "--rate-limit 0 would refuse every request"},
		{[]string{"--address-rate-limit", "0"}, "--address-rate-limit 0 would refuse every request"},
		{[]string{"--rate-burst", "0"}, "--rate-burst 0: send at least 1"},
		{[]string{"--person-rate-limit", "0"}, "--person-rate-limit 0 would refuse every request"},
		{[]string{"--person-rate-burst", "0"}, "--person-rate-burst 0: send at least 1"},
		{[]string{"--feed-refresh", "0s"}, "--feed-refresh 0s: send a duration from 1s to 1h"},
		{[]string{"--address-rate-burst", "-3"}, "--address-rate-burst -3: send at least 1"},
		{[]string{"--client-ip-header", "X-Forwarded-For", "--trusted-proxy-hops", "0"}, "--trusted-proxy-hops 0: send the number of your proxies"},
		{[]string{"--trusted-proxy-hops", "2"}, "--trusted-proxy-hops counts entries of --client-ip-header"},
	} {
		if _, err := m.parseFlags("serve", tc.args, true, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want an error saying %q", tc.args, err, tc.want)
		}
	}
}

// TestConfigWidgetDomain: SHOP_WIDGET_DOMAIN is an https origin (a
// trailing / dropped) or a host name as a host gives it; anything else stops
// the shop with what to send.
func TestConfigWidgetDomain(t *testing.T) {
	for _, tc := range []struct{ env, want, err string }{
		{"", "", ""},
		{"https://shop.example.com", "https://shop.example.com", ""},
		{"https://shop.example.com/", "https://shop.example.com", ""},
		{"https://shop.example.com:8443", "https://shop.example.com:8443", ""},
		{"abc123.claudemcpcontent.com", "abc123.claudemcpcontent.com", ""},
		{"http://shop.example.com", "", "SHOP_WIDGET_DOMAIN"},
		{"https://shop.example.com/widgets", "", "SHOP_WIDGET_DOMAIN"},
		{"https://shop.example.com?x=1", "", "SHOP_WIDGET_DOMAIN"},
		{"https://Shop.Example.com", "", "SHOP_WIDGET_DOMAIN"},
		{"https://user@shop.example.com", "", "SHOP_WIDGET_DOMAIN"},
		{"shop example.com", "", "SHOP_WIDGET_DOMAIN"},
		{"localhost", "", "SHOP_WIDGET_DOMAIN"},
	} {
		t.Run(tc.env, func(t *testing.T) {
			env := map[string]string{"SHOP_WIDGET_DOMAIN": tc.env}
			m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }, Logger: slog.New(slog.DiscardHandler)}
			cfg, err := m.parseFlags("serve", []string{"--addr", "127.0.0.1:0"}, true, nil)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "https://shop.example.com")):
				t.Errorf("error %v, want one naming %s and an example", err, tc.err)
			case tc.err == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.err == "" && cfg.WidgetDomain != tc.want:
				t.Errorf("WidgetDomain %q, want %q", cfg.WidgetDomain, tc.want)
			}
		})
	}
}

func TestLogLevel(t *testing.T) {
	for _, c := range []struct {
		name string
		want slog.Level
		ok   bool
	}{
		{"", slog.LevelInfo, true},
		{"debug", slog.LevelDebug, true},
		{"INFO", slog.LevelInfo, true},
		{"Warn", slog.LevelWarn, true},
		{"error", slog.LevelError, true},
		{"verbose", 0, false},
	} {
		got, err := logLevel(c.name)
		if (err == nil) != c.ok || c.ok && got != c.want {
			t.Errorf("logLevel(%q) = %v, %v; want %v (ok %t)", c.name, got, err, c.want, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "SHOP_LOG_LEVEL") {
			t.Errorf("logLevel(%q): %v does not name the variable", c.name, err)
		}
	}
}
