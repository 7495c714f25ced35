package orders_test

import (
	"context"
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"shop"
	"shop/database/dbtest"
	"shop/orders"
)

func token(permalink string) string {
	_, t, _ := strings.Cut(permalink, "?t=")
	return t
}

func TestByPermalink(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		o := newOrders(db)
		addSession(t, db, "cs_1")
		addSession(t, db, "cs_2")
		ord := create(t, o, db, sample("cs_1"))
		other := create(t, o, db, sample("cs_2"))
		good := token(ord.PermalinkURL)
		raw, err := base64.RawURLEncoding.DecodeString(good)
		if err != nil || len(raw) != 32 {
			t.Fatalf("token %q: %d bytes, %v", good, len(raw), err)
		}
		raw[0] ^= 1
		flipped := base64.RawURLEncoding.EncodeToString(raw)
		unknown := "ord_" + strings.Repeat("b", 26)
		otherKey := orders.New(db, &orders.Options{ReceiptKey: []byte(strings.Repeat("x", 32))})
		replica := orders.New(db, &orders.Options{ReceiptKey: []byte(strings.Repeat("k", 32))})

		cases := []struct {
			name, id, token string
			ok              bool
		}{
			{"OK", ord.ID, good, true},
			{"OKOnAReplicaWithTheSameKey", ord.ID, token(replica.PermalinkURL(ord.ID)), true},
			{"Empty", ord.ID, "", false},
			{"Flipped", ord.ID, flipped, false},
			{"Truncated", ord.ID, good[:len(good)-2], false},
			{"NonCanonicalLastChar", ord.ID, good[:len(good)-1] + string(good[len(good)-1]^1), false},
			{"Padded", ord.ID, good + "=", false},
			{"Uppercased", ord.ID, strings.ToUpper(good), false},
			{"OtherOrdersToken", ord.ID, token(other.PermalinkURL), false},
			{"OtherKey", ord.ID, token(otherKey.PermalinkURL(ord.ID)), false},
			{"UnknownIDWithItsToken", unknown, token(o.PermalinkURL(unknown)), false},
			{"MalformedID", "../" + ord.ID, good, false},
		}
		var refusals []*shop.Error
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got, err := o.ByPermalink(ctx, tc.id, tc.token)
				if tc.ok {
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(ord, got); diff != "" {
						t.Errorf("(-want +got):\n%s", diff)
					}
					return
				}
				if got != nil || shop.ErrorCode(err) != shop.NotFound {
					t.Fatalf("ByPermalink = %v, %v; want not_found", got, err)
				}
				refusals = append(refusals, refusal(err))
			})
		}
		for _, r := range refusals[1:] {
			if diff := cmp.Diff(refusals[0], r); diff != "" {
				t.Errorf("refusals differ (-first +this):\n%s", diff)
			}
		}
	})
}

func TestLoadReceiptKeyFromEnv(t *testing.T) {
	long := strings.Repeat("s", 32)
	cases := []struct {
		name, env, want string
		err             bool
	}{
		{"OK", long, long, false},
		{"Trimmed", "  " + long + "\n", long, false},
		{"TooShort", strings.Repeat("s", 31), "", true},
		{"ShortAfterTrimming", "   " + strings.Repeat("s", 30) + "   ", "", true},
		{"OnlySpaces", "    ", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The environment's key needs no database.
			got, err := orders.LoadReceiptKey(context.Background(), nil, tc.env)
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), "SHOP_RECEIPT_KEY") {
					t.Errorf("LoadReceiptKey(%q) = %q, %v; want an error naming SHOP_RECEIPT_KEY", tc.env, got, err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("LoadReceiptKey(%q) = %q, %v; want %q", tc.env, got, err, tc.want)
			}
		})
	}
}

func TestLoadReceiptKeyGenerated(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		const n = 10
		keys := make([][]byte, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n { // replicas starting together
			wg.Go(func() { keys[i], errs[i] = orders.LoadReceiptKey(ctx, db, "") })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if diff := cmp.Diff(keys[0], keys[i]); diff != "" {
				t.Errorf("replica %d has another key (-0 +%d):\n%s", i, i, diff)
			}
		}
		if len(keys[0]) != 64 || strings.Trim(string(keys[0]), "0123456789abcdef") != "" {
			t.Errorf("key %q: want 64 hex digits", keys[0])
		}
		again, err := orders.LoadReceiptKey(ctx, db, "")
		if err != nil || string(again) != string(keys[0]) {
			t.Errorf("later LoadReceiptKey = %q, %v; want the stored %q", again, err, keys[0])
		}
		if n := count(t, db, "SELECT COUNT(*) FROM settings WHERE name = 'receipt_key'"); n != 1 {
			t.Errorf("%d stored keys, want 1", n)
		}
		// The environment's key wins over the stored one.
		env := strings.Repeat("e", 40)
		if got, err := orders.LoadReceiptKey(ctx, db, env); err != nil || string(got) != env {
			t.Errorf("LoadReceiptKey(env) = %q, %v; want %q", got, err, env)
		}
	})
}
