package orders_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"shop/database/dbtest"
	"shop/orders"
)

func TestLoadSigningKeyFromEnv(t *testing.T) {
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	pkcs8 := func(k *ecdsa.PrivateKey) string {
		der, _ := x509.MarshalPKCS8PrivateKey(k)
		return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	}
	sec1, _ := x509.MarshalECPrivateKey(p256)
	cases := []struct {
		name, env string
		ok        bool
	}{
		{"PKCS8", pkcs8(p256), true},
		{"SEC1", "\n" + string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1})), true},
		{"P384", pkcs8(p384), false},
		{"NotPEM", "hello", false},
		{"Garbage", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("xx")})), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := orders.LoadSigningKey(context.Background(), nil, tc.env)
			if !tc.ok {
				if err == nil || !strings.Contains(err.Error(), "SHOP_SIGNING_KEY") {
					t.Errorf("LoadSigningKey = %v, %v; want an error naming SHOP_SIGNING_KEY", got, err)
				}
				return
			}
			if err != nil || !got.Equal(p256) {
				t.Errorf("LoadSigningKey = %v, %v; want the key sent", got, err)
			}
		})
	}
}

func TestLoadSigningKeyGenerated(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		const n = 6
		keys := make([]*ecdsa.PrivateKey, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n { // replicas starting together
			wg.Go(func() { keys[i], errs[i] = orders.LoadSigningKey(ctx, db, "") })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if !keys[i].Equal(keys[0]) {
				t.Errorf("replica %d has another key", i)
			}
		}
		if keys[0].Curve != elliptic.P256() {
			t.Errorf("curve %s, want P-256", keys[0].Curve.Params().Name)
		}
		again, err := orders.LoadSigningKey(ctx, db, "")
		if err != nil || !again.Equal(keys[0]) {
			t.Errorf("later LoadSigningKey = %v; want the stored key", err)
		}
		if n := count(t, db, "SELECT COUNT(*) FROM settings WHERE name = 'signing_key'"); n != 1 {
			t.Errorf("%d stored keys, want 1", n)
		}
	})
}
