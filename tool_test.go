package shop_test

import (
	"encoding/json"
	"errors"
	"testing"

	"shop"
)

type inner struct {
	Items []struct {
		Quantity int `json:"quantity"`
	} `json:"items"`
	Note string `json:"note"`
}

type outer struct {
	ID string `json:"id"`
	inner
	Nested *struct {
		inner
	} `json:"nested"`
}

// TestDecodeArgsParam: a wrong type is refused at the field's JSONPath as
// the caller sent it, embedded structs flattened as encoding/json reads them.
func TestDecodeArgsParam(t *testing.T) {
	for _, tc := range []struct{ args, param string }{
		{`{"id": 1}`, "$.id"},
		{`{"note": true}`, "$.note"},
		{`{"items": [{"quantity": 1.5}]}`, "$.items.quantity"},
		{`{"nested": {"items": [{"quantity": "x"}]}}`, "$.nested.items.quantity"},
		{`[]`, "$"},
	} {
		var v outer
		err := shop.DecodeArgs(json.RawMessage(tc.args), &v)
		var e *shop.Error
		if !errors.As(err, &e) || e.Code != shop.Invalid || e.Param != tc.param {
			t.Errorf("%s: %v; want invalid at %s", tc.args, err, tc.param)
		}
	}
	var v outer
	if err := shop.DecodeArgs(json.RawMessage(`{"id": "a", "unknown": 1, "items": [{"quantity": 2}]}`), &v); err != nil || v.Items[0].Quantity != 2 {
		t.Errorf("lenient decoding: %v %+v", err, v)
	}
}
