package shop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
)

// Tool is an MCP tool as a part of the shop declares it, free of any MCP
// library's types: package server registers it on the buyers' or the admin
// endpoint and translates its errors for the caller.
type Tool struct {
	// Name is the tool's name on the wire ("search_products").
	Name string
	// Title is a short human-readable name.
	Title string
	// Description tells the model what the tool does, what to call first and
	// which error codes it may answer.
	Description string
	// InputSchema is the JSON Schema of the arguments; NewTool infers it
	// from the arguments' Go type.
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema of the structured content of a
	// successful call; NewTool infers it from the result's Go type. Package
	// server adds the shape of a refusal to it (see server.NewMCP).
	OutputSchema json.RawMessage
	// ReadOnly, Destructive and Idempotent become the tool's annotations.
	ReadOnly, Destructive, Idempotent bool
	// Auth is what the tool asks of the buyer's linked account (docs/accounts.md)
	//; the zero value is a guest tool. Package server declares it as
	// the descriptor's securitySchemes and, for a buyer it does not allow,
	// answers the refusal with the challenge that starts linking, without
	// calling Handle.
	Auth AuthRequirement
	// Meta is the tool's _meta (widget templates and the like); may be nil.
	Meta map[string]any
	// Handle runs the tool on the raw arguments. A returned *Error reaches
	// the caller as it is; any other error is logged and answered generically.
	Handle func(ctx context.Context, args json.RawMessage) (*Result, error)
}

// Result is what a tool answers: the structured content for widgets and the
// model, and a short text for hosts without UI.
type Result struct {
	Structured any
	Text       string
}

// MaxArgsBytes bounds the size of a tool call's arguments.
const MaxArgsBytes = 256 << 10

// DecodeArgs decodes a tool's JSON arguments into v. Unknown fields are
// ignored, as the contract asks of lenient decoding; a value of the wrong type
// is an *Error naming the field by its JSONPath and the type to send.
func DecodeArgs(args json.RawMessage, v any) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	if len(args) > MaxArgsBytes {
		return Errorf(Invalid, "$", "the arguments are %d bytes; send at most %d", len(args), MaxArgsBytes)
	}
	if args[0] != '{' {
		return Errorf(Invalid, "$", "the arguments must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	if err := dec.Decode(v); err != nil {
		return decodeError(err, reflect.TypeOf(v))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Errorf(Invalid, "$", "the arguments must be one JSON object")
	}
	return nil
}

func decodeError(err error, into reflect.Type) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		param := "$"
		if typeErr.Field != "" {
			param = "$." + jsonPath(into, typeErr.Field)
		}
		return Errorf(Invalid, param, "must be %s, not a JSON %s", describeType(typeErr.Type), typeErr.Value)
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return Errorf(Invalid, "$", "the arguments are not valid JSON (at byte %d)", syntaxErr.Offset)
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Errorf(Invalid, "$", "the arguments could not be read: %v", err)
}

// jsonPath is the JSON path of a field as encoding/json names it in an
// *json.UnmarshalTypeError, without the Go names of the embedded structs it
// goes through (which are no part of the JSON): "cartArgs.items.quantity"
// becomes "items.quantity".
func jsonPath(t reflect.Type, field string) string {
	var out []string
	for _, name := range strings.Split(field, ".") {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		var next reflect.Type
		embedded := false
		for i := 0; t != nil && t.Kind() == reflect.Struct && i < t.NumField(); i++ {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && tag == "" && f.Name == name {
				next, embedded = f.Type, true
				break
			}
			if tag == name || (tag == "" && f.Name == name) {
				next = f.Type
				break
			}
		}
		if !embedded {
			out = append(out, name)
		}
		t = next
	}
	return strings.Join(out, ".")
}

// describeType names a Go type the way a JSON caller thinks of it.
func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a " + t.Kind().String()
}
