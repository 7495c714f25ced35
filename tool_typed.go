package shop

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Refiner is implemented by a tool's argument types, and by the types they
// hold, to add to the schema inferred from their fields what a struct tag
// cannot say: bounds, lengths, patterns, enums and defaults, from the same
// constants the code checks. s is the schema of the type itself (of the
// object that holds its fields, for an embedded struct); a type's
// RefineSchema runs after those of the types it holds, so it may override
// them. Results are described by their fields alone: a value type shared by
// arguments and results (an address) is bounded where it is an argument.
type Refiner interface {
	RefineSchema(s *jsonschema.Schema)
}

// NewTool declares t from Go types: its InputSchema is inferred from In and
// its OutputSchema from Out (github.com/google/jsonschema-go: a field's
// `jsonschema` tag is its description; a Refiner of the arguments adds
// their bounds), and its Handle decodes the arguments into In with
// DecodeArgs (unknown fields ignored, a wrong type an *Error naming the
// field), calls h and answers its Out as the structured content (the
// alternative set, for an Out that embeds OneOf) and its string as the text.
//
// The input schema does not forbid other properties, since the decoding
// ignores them, and none of its properties allows null unless a Refiner
// says so. NewTool panics when a type has no JSON Schema (a programming
// error, found when the tools are listed).
func NewTool[In, Out any](t Tool, h func(ctx context.Context, in In) (Out, string, error)) Tool {
	t.InputSchema = mustSchema[In](t.Name, true)
	t.OutputSchema = mustSchema[Out](t.Name, false)
	t.Handle = func(ctx context.Context, raw json.RawMessage) (*Result, error) {
		var in In
		if err := DecodeArgs(raw, &in); err != nil {
			return nil, err
		}
		out, text, err := h(ctx, in)
		if err != nil {
			return nil, err
		}
		return &Result{Structured: chosen(out), Text: text}, nil
	}
	return t
}

// OneOf, embedded in a tool's result struct, makes its exported pointer
// fields alternatives, exactly one of them set (a two-step action's preview,
// or what it did): the structured content is that one, and the result's
// schema is anyOf theirs.
type OneOf struct{}

var oneOfType = reflect.TypeFor[OneOf]()

// alternatives are the types of the alternatives of a result type that
// embeds OneOf, or nil.
func alternatives(t reflect.Type) []reflect.Type {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var alts []reflect.Type
	embeds := false
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case f.Anonymous && f.Type == oneOfType:
			embeds = true
		case f.IsExported() && f.Type.Kind() == reflect.Pointer:
			alts = append(alts, f.Type.Elem())
		}
	}
	if !embeds {
		return nil
	}
	return alts
}

// chosen is the alternative set in a result that embeds OneOf, else v.
func chosen(v any) any {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || alternatives(rv.Type()) == nil {
		return v
	}
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() && rv.Type().Field(i).IsExported() {
			return f.Interface()
		}
	}
	return nil
}

// SchemaFor is the JSON Schema NewTool infers for T: for the arguments of a
// tool when input is true, else for its results.
func SchemaFor[T any](input bool) (*jsonschema.Schema, error) {
	return schemaFor(reflect.TypeFor[T](), input)
}

func schemaFor(typ reflect.Type, input bool) (*jsonschema.Schema, error) {
	if alts := alternatives(typ); !input && alts != nil {
		s := &jsonschema.Schema{Type: "object"}
		for _, alt := range alts {
			as, err := schemaFor(alt, false)
			if err != nil {
				return nil, err
			}
			s.AnyOf = append(s.AnyOf, as)
		}
		return s, nil
	}
	s, err := jsonschema.ForType(typ, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {}, // any JSON value
	}})
	if err != nil {
		return nil, err
	}
	s.Types, s.Type = nil, "object" // a tool's arguments and results are objects, never null
	if input {
		lenient(s)
		refine(typ, s)
	}
	return s, nil
}

func mustSchema[T any](tool string, input bool) json.RawMessage {
	s, err := SchemaFor[T](input)
	if err == nil {
		var b []byte
		if b, err = json.Marshal(s); err == nil {
			return b
		}
	}
	panic(fmt.Sprintf("tool %s: schema of %s: %v", tool, reflect.TypeFor[T](), err))
}

// lenient makes an inferred input schema say what DecodeArgs accepts: other
// properties are ignored, not refused, and a null is never asked for (a
// pointer or slice only marks a field that may be left out).
func lenient(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Not != nil && reflect.ValueOf(*ap.Not).IsZero() {
		s.AdditionalProperties = nil
	}
	s.PropertyOrder = nil
	for _, p := range s.Properties {
		lenient(p)
	}
	lenient(s.Items)
	lenient(s.AdditionalProperties)
}

var refinerType = reflect.TypeFor[Refiner]()

// refine runs the Refiners of t and of the types it holds on their parts of s.
func refine(t reflect.Type, s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case len(f.Index) > 1 || name == "-":
				// promoted fields are refined with their struct
			case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
				refine(f.Type, s) // its fields are the parent's
			case f.IsExported():
				if name == "" {
					name = f.Name
				}
				refine(f.Type, s.Properties[name])
			}
		}
	case reflect.Slice, reflect.Array:
		refine(t.Elem(), s.Items)
	case reflect.Map:
		refine(t.Elem(), s.AdditionalProperties)
	}
	if reflect.PointerTo(t).Implements(refinerType) {
		reflect.New(t).Interface().(Refiner).RefineSchema(s)
	}
}
