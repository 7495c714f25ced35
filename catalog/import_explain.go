package catalog

// The helpers by which ReadFile explains a decoding error: where in the
// product it lies and what to send there.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// explainProduct says where in the product raw the decoding error err lies
// and what to send there, as a path from the product: ".variants[0].price:
// send …, got a string".
func explainProduct(raw []byte, err error) string {
	var te *json.UnmarshalTypeError
	switch name, unknown := unknownFieldName(err); {
	case unknown && hasMember(raw, name):
		return unknownField(name, reflect.TypeFor[ProductRecord](), "a product")
	case unknown: // deeper: in a variant
		return explainArray[VariantRecord](member(raw, "variants"), "variants", "variant", explainVariant, err)
	case !errors.As(err, &te):
		return ": " + err.Error()
	case te.Field == "":
		return ": " + sendGot("product", err)
	case te.Field == "images":
		return explainArray[string](member(raw, "images"), "images", "image", nil, err)
	case te.Field == "variants" || strings.HasPrefix(te.Field, "variants."):
		return explainArray[VariantRecord](member(raw, "variants"), "variants", "variant", explainVariant, err)
	}
	return "." + te.Field + ": " + sendGot(te.Field, err)
}

// explainVariant is explainProduct for a variant.
func explainVariant(raw []byte, err error) string {
	var te *json.UnmarshalTypeError
	switch name, unknown := unknownFieldName(err); {
	case unknown:
		return unknownField(name, reflect.TypeFor[VariantRecord](), "a variant")
	case !errors.As(err, &te):
		return ": " + err.Error()
	case te.Field == "":
		return ": " + sendGot("variant", err)
	case te.Field == "options":
		var options map[string]json.RawMessage
		if err := json.Unmarshal(member(raw, "options"), &options); err != nil {
			return ".options: " + sendGot("options", err)
		}
		for _, name := range slices.Sorted(maps.Keys(options)) {
			if err := json.Unmarshal(options[name], new(string)); err != nil {
				return fmt.Sprintf(".options[%q]: %s", name, sendGot("option", err))
			}
		}
	}
	return "." + te.Field + ": " + sendGot(te.Field, err)
}

// explainArray finds the element of the JSON array arr, the value of field,
// that does not decode strictly into a T, and explains its error with
// explain (nil for an array of plain values, each named element). err is the
// error the decoder met in field, for when no element fails alone.
func explainArray[T any](arr []byte, field, element string, explain func([]byte, error) string, err error) string {
	var elems []json.RawMessage
	if err := json.Unmarshal(arr, &elems); err != nil {
		return "." + field + ": " + sendGot(field, err)
	}
	for k, e := range elems {
		dec := json.NewDecoder(bytes.NewReader(e))
		dec.DisallowUnknownFields()
		if err := dec.Decode(new(T)); err != nil {
			at := fmt.Sprintf(".%s[%d]", field, k)
			if explain == nil {
				return at + ": " + sendGot(element, err)
			}
			return at + explain(e, err)
		}
	}
	// No element fails alone (the field is given twice, say): the
	// decoder's own error, with the path it has.
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return "." + te.Field + ": " + sendGot(te.Field, err)
	}
	return "." + field + ": " + err.Error()
}

// member returns the value in the JSON object raw that encoding/json decodes
// into the field name (the key matched regardless of case), or nil.
func member(raw []byte, name string) []byte {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	if v, ok := m[name]; ok {
		return v
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return nil
}

// hasMember reports whether the JSON object raw has the key name.
func hasMember(raw []byte, name string) bool {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	_, ok := m[name]
	return ok
}

// unknownFieldName returns the name in an unknown-field error of
// encoding/json, which has no type of its own.
func unknownFieldName(err error) (string, bool) {
	const prefix = "json: unknown field "
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return "", false
	}
	name, uerr := strconv.Unquote(msg[len(prefix):])
	return name, uerr == nil
}

// unknownField says, as a step of a path (".prise: …"), that name is no field
// of the struct t (what, for people), suggesting the field it may be a
// misspelling of.
func unknownField(name string, t reflect.Type, what string) string {
	var known []string
	for i := range t.NumField() {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		known = append(known, tag)
	}
	msg := pathName(name) + ": unknown field"
	best, bestDist := "", 3 // suggest only near misses
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), k); d < bestDist && d < len(name) {
			best, bestDist = k, d
		}
	}
	if best != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	return msg + fmt.Sprintf("; %s holds only %s and %s", what, strings.Join(known[:len(known)-1], ", "), known[len(known)-1])
}

// pathName is a key as a step of a path: ".price", or `["two words"]`.
func pathName(key string) string {
	if key != "" && strings.IndexFunc(key, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
	}) < 0 {
		return "." + key
	}
	return fmt.Sprintf("[%q]", key)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// sendGot says what to send for field (the last step of a path) and what
// came instead, from a type error of encoding/json.
func sendGot(field string, err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	field = field[strings.LastIndexByte(field, '.')+1:]
	what, ok := sendWhat[field]
	if !ok {
		what = "a " + te.Type.String()
	}
	got := te.Value
	switch {
	case got == "string", got == "number":
		got = "a " + got
	case strings.HasPrefix(got, "number "):
		got = strings.TrimPrefix(got, "number ")
	case got == "bool":
		got = "true or false"
	case got == "array", got == "object":
		got = "an " + got
	}
	return "send " + what + ", got " + got
}

// tokenKind describes a JSON token for messages.
func tokenKind(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return "an object"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "true or false"
	}
	return "null"
}
