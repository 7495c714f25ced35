package checkout

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPolicyLimits(t *testing.T) {
	t.Run("Defaults", func(t *testing.T) {
		p, err := LoadPolicy(strings.NewReader(validYAML(t)), "policy.yaml")
		if err != nil {
			t.Fatal(err)
		}
		want := Limits{UnitsPerLine: 10, UnitsPerVariant: 10, UnitsPerBuyer: 50, OpenSessions: 5,
			UnitsPerAccount: 200, UnitsPerAddress: 100, UnverifiedShare: 50, NetworkMultiple: 8, SessionsPerHour: 30, SessionsPerAddressHour: 120,
			PaymentsPerHour: 10, PaymentsPerAddressHour: 30, DeclinesBeforeLock: 5, DeclineLockMinutes: 15}
		if diff := cmp.Diff(want, p.BuyerLimits()); diff != "" {
			t.Errorf("BuyerLimits (-want +got):\n%s", diff)
		}
		if got := p.SessionLifetime(); got != 6*time.Hour {
			t.Errorf("SessionLifetime = %v, want 6h", got)
		}
		if got := p.SessionRetention(); got != 30*24*time.Hour {
			t.Errorf("SessionRetention = %v, want 720h", got)
		}
	})
	t.Run("Raised", func(t *testing.T) {
		yaml := validYAML(t) + "\nlimits:\n  units_per_line: 200\n  units_per_variant: 400\n  units_per_buyer: 1000\n  open_sessions: 20\nsessions:\n  lifetime_hours: 48\n  retention_days: 90\n"
		p, err := LoadPolicy(strings.NewReader(yaml), "policy.yaml")
		if err != nil {
			t.Fatal(err)
		}
		want := Limits{UnitsPerLine: 200, UnitsPerVariant: 400, UnitsPerBuyer: 1000, OpenSessions: 20,
			UnitsPerAccount: 200, UnitsPerAddress: 100, UnverifiedShare: 50, NetworkMultiple: 8, SessionsPerHour: 30, SessionsPerAddressHour: 120,
			PaymentsPerHour: 10, PaymentsPerAddressHour: 30, DeclinesBeforeLock: 5, DeclineLockMinutes: 15}
		if diff := cmp.Diff(want, p.BuyerLimits()); diff != "" {
			t.Errorf("BuyerLimits (-want +got):\n%s", diff)
		}
		if p.SessionLifetime() != 48*time.Hour || p.SessionRetention() != 90*24*time.Hour {
			t.Errorf("lifetime %v, retention %v; want 48h, 2160h", p.SessionLifetime(), p.SessionRetention())
		}
	})
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"ErrFraction", "limits:\n  units_per_line: 2.5\n",
			[]string{`policy.yaml: limits.units_per_line: must be a whole number > 0 (got "2.5")`}},
		{"ErrOverMax", "limits:\n  units_per_line: 1000\n  open_sessions: -1\nsessions:\n  lifetime_hours: 500\n",
			[]string{
				"policy.yaml: limits.units_per_line: must be a whole number from 1 to 999, or left out for the default (got 1000)",
				"policy.yaml: limits.open_sessions: must be a whole number from 1 to 100, or left out for the default (got -1)",
				"policy.yaml: sessions.lifetime_hours: must be a whole number from 1 to 168, or left out for the default (got 500)",
			}},
		{"ErrUnknownKey", "limits:\n  units_per_order: 3\n",
			[]string{"policy.yaml: limits.units_per_order: unknown key; the keys allowed here are units_per_line, units_per_variant, units_per_buyer, open_sessions, " +
				"units_per_account, units_per_address, unverified_share_percent, host_addresses, network_multiple, sessions_per_hour, sessions_per_address_hour, " +
				"payments_per_hour, payments_per_address_hour, declines_before_lock, decline_lock_minutes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadPolicy(strings.NewReader(validYAML(t)+"\n"+tc.yaml), "policy.yaml")
			var got []string
			for _, l := range errLines(err) {
				if i := strings.LastIndex(l, " (line "); i > 0 {
					l = l[:i]
				}
				got = append(got, l)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHostAddresses: the policy's host ranges and serve's --host-addresses
// are checked, and an address in a range gets its units and the hourly
// caps in proportion; one outside gets the household's.
func TestHostAddresses(t *testing.T) {
	yaml := validYAML(t) + "\nlimits:\n  host_addresses:\n    - cidr: 203.0.113.0/24\n      units: 5000\n    - cidr: \"2001:db8::/32\"\n      units: 1000\n"
	p, err := LoadPolicy(strings.NewReader(yaml), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l := p.BuyerLimits()
	for _, tc := range []struct {
		addr         string
		units, scale int64
	}{
		{"203.0.113.9", 5000, 50},
		{"2001:db8:1:2::/64", 1000, 10},
		{"198.51.100.1", DefaultUnitsPerAddress, 1},
		{"", DefaultUnitsPerAddress, 1},
	} {
		if got := l.forAddress(tc.addr); got.units != tc.units || got.scale != tc.scale {
			t.Errorf("forAddress(%q) = %+v, want units %d scale %d", tc.addr, got, tc.units, tc.scale)
		}
	}
	_, err = LoadPolicy(strings.NewReader(validYAML(t)+"\nlimits:\n  host_addresses:\n    - cidr: 203.0.113.0\n      units: 0\n"), "policy.yaml")
	var got []string
	for _, line := range errLines(err) {
		if i := strings.LastIndex(line, " (line "); i > 0 {
			line = line[:i]
		}
		got = append(got, line)
	}
	want := []string{
		`policy.yaml: limits.host_addresses[0].cidr: must be a CIDR range such as 203.0.113.0/24 or 2001:db8::/32 (got "203.0.113.0")`,
		"policy.yaml: limits.host_addresses[0].units: must be a whole number from 1 to 10000000 (got 0)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		flag string
		ok   bool
	}{
		{"203.0.113.0/24:5000,2001:db8::/32:100", true},
		{"203.0.113.0/24", false},
		{"203.0.113.0/24:0", false},
		{"nonsense:5", false},
	} {
		h, err := ParseHostAddresses(tc.flag)
		if (err == nil) != tc.ok {
			t.Errorf("ParseHostAddresses(%q) = %+v, %v; want ok %v", tc.flag, h, err, tc.ok)
		}
	}
}
