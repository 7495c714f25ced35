package purchase

import (
	"shop/contract"

	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"shop/checkout"
	"shop/orders"
)

// The run decodes the shop's answers into its own types and compares
// receipts and sessions field by field; a field the shop sends that the run
// does not decode would go unchecked. TestContractShapes fills every field
// of the shop's contract types, encodes them as the shop does, and checks
// that the run's types take every field (no unknown field) and give back
// the same JSON (no field the shop does not send). Only this test imports
// the shop's packages: the run itself knows the shop by its answers.
func TestContractShapes(t *testing.T) {
	for _, c := range []struct {
		name       string
		shop, mine any
	}{
		{"session", &checkout.Session{}, &contract.Session{}},
		{"receipt", &orders.Receipt{}, &contract.Receipt{}},
		{"payment link", &checkout.PaymentLink{}, &contract.PaymentLink{}},
		{"address", &checkout.Address{}, &Address{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fill(reflect.ValueOf(c.shop).Elem())
			sent, err := json.Marshal(c.shop)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(sent))
			dec.DisallowUnknownFields()
			if err := dec.Decode(c.mine); err != nil {
				t.Fatalf("the run's %T does not take what the shop sends: %v\n%s", c.mine, err, sent)
			}
			back, err := json.Marshal(c.mine)
			if err != nil {
				t.Fatal(err)
			}
			var want, got any
			if err := json.Unmarshal(sent, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(back, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the run's %T reads the shop's %T differently (-shop +run):\n%s", c.mine, c.shop, diff)
			}
		})
	}
}

// fill sets every field of v to a value that is not its zero: strings "x",
// numbers 1, true, a fixed time, one element in slices and maps, pointers
// to filled values.
func fill(v reflect.Value) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	}
}
