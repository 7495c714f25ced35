package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"shop"
)

// The specification files, as package shop embeds them (testdata/acp).
const (
	schemaFile  = "testdata/acp/schema.agentic_checkout.json"
	openrpcFile = "testdata/acp/openrpc.agentic_checkout.json"
)

// schemas are the JSON Schema definitions ($defs) of the ACP bundle and the
// OpenRPC binding's meta object, read once.
type schemas struct {
	defs map[string]any
	meta map[string]any
}

func loadSchemas() (*schemas, error) {
	raw, err := shop.Specs.ReadFile(schemaFile)
	if err != nil {
		return nil, err
	}
	var bundle struct {
		Defs map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &bundle); err != nil {
		return nil, fmt.Errorf("%s: %w", schemaFile, err)
	}
	raw, err = shop.Specs.ReadFile(openrpcFile)
	if err != nil {
		return nil, err
	}
	var rpc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil {
		return nil, fmt.Errorf("%s: %w", openrpcFile, err)
	}
	s := &schemas{defs: bundle.Defs, meta: rpc.Components.Schemas["meta"]}
	if s.meta == nil || len(s.defs) == 0 {
		return nil, errors.New("acp: the specification files lack $defs or the meta schema")
	}
	return s, nil
}

// bundled returns the definition name with every $ref resolved in place, as
// the binding requires of the schemas served to MCP clients. A $ref with
// sibling keywords becomes allOf [target, siblings] unless the siblings are
// only a description, which then replaces the target's.
func (s *schemas) bundled(name string) (map[string]any, error) {
	def, ok := s.defs[name]
	if !ok {
		return nil, fmt.Errorf("acp: no $defs/%s", name)
	}
	out, err := s.resolve(def, []string{name})
	if err != nil {
		return nil, err
	}
	return out.(map[string]any), nil
}

func (s *schemas) resolve(v any, stack []string) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			return s.resolveRef(ref, v, stack)
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			r, err := s.resolve(e, stack)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			r, err := s.resolve(e, stack)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

func (s *schemas) resolveRef(ref string, at map[string]any, stack []string) (any, error) {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok || s.defs[name] == nil {
		return nil, fmt.Errorf("acp: unresolvable $ref %q", ref)
	}
	for _, n := range stack {
		if n == name {
			return nil, fmt.Errorf("acp: $ref cycle through %s", strings.Join(append(stack, name), " → "))
		}
	}
	target, err := s.resolve(s.defs[name], append(stack, name))
	if err != nil {
		return nil, err
	}
	siblings := map[string]any{}
	for k, e := range at {
		if k != "$ref" {
			siblings[k] = e
		}
	}
	switch {
	case len(siblings) == 0:
		return target, nil
	case len(siblings) == 1 && siblings["description"] != nil:
		t := target.(map[string]any)
		c := make(map[string]any, len(t))
		for k, e := range t {
			c[k] = e
		}
		c["description"] = siblings["description"]
		return c, nil
	}
	rest, err := s.resolve(siblings, stack)
	if err != nil {
		return nil, err
	}
	return map[string]any{"allOf": []any{target, rest}}, nil
}

// withQuantity returns a copy of a request's bundled schema in which the
// items of line_items accept quantity. The 2026-04-17 JSON Schema moved
// quantity from Item to LineItem, while its RFC (§5: Item is id and
// quantity) and every request example but the MCP binding's still send
// it; the shop reads it as the units wanted (1 when absent) and refuses a
// fraction itself, naming the field.
func withQuantity(payload map[string]any) map[string]any {
	props, _ := payload["properties"].(map[string]any)
	li, _ := props["line_items"].(map[string]any)
	item, _ := li["items"].(map[string]any)
	itemProps, _ := item["properties"].(map[string]any)
	if itemProps == nil {
		return payload
	}
	c := clone(payload).(map[string]any)
	cItem := c["properties"].(map[string]any)["line_items"].(map[string]any)["items"].(map[string]any)
	cItem["properties"].(map[string]any)["quantity"] = map[string]any{
		"type": "number", "exclusiveMinimum": 0, "maximum": maxQuantity,
		"description": "Units of the item (whole units: the shop sells physical goods); 1 when absent.",
	}
	return c
}

func clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(v))
		for k, e := range v {
			c[k] = clone(e)
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, e := range v {
			c[i] = clone(e)
		}
		return c
	}
	return v
}

// validator checks a payload against a bundled schema.
type validator struct{ schema *jsonschema.Schema }

func compile(name string, schema map[string]any) (*validator, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	url := "urn:shop:acp:" + name
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("acp: compile %s: %w", name, err)
	}
	return &validator{schema: sch}, nil
}

// check validates payload (decoded with jsonschema.UnmarshalJSON) and
// answers the first problem as an ACP invalid_request naming the field
// under prefix ("$.payload").
func (v *validator) check(payload any, prefix string) *Error {
	err := v.schema.Validate(payload)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &Error{Type: InvalidRequest, Code: "invalid", Message: err.Error(), Param: prefix}
	}
	leaf := deepest(ve)
	param := prefix + jsonPath(leaf.InstanceLocation)
	code := "invalid"
	msg := leaf.ErrorKind.LocalizedString(message.NewPrinter(language.English))
	switch k := leaf.ErrorKind.(type) {
	case *kind.Required:
		code = "missing_required_field"
		if len(k.Missing) > 0 {
			param += "." + k.Missing[0]
			msg = "Missing required field: " + strings.TrimPrefix(strings.TrimPrefix(param, prefix), ".")
		}
	case *kind.AdditionalProperties:
		if len(k.Properties) > 0 {
			param += "." + k.Properties[0]
			msg = "Unknown field " + strings.TrimPrefix(strings.TrimPrefix(param, prefix), ".") + "; the ACP schema of 2026-04-17 does not have it"
		}
	}
	return &Error{Type: InvalidRequest, Code: code, Message: msg, Param: param}
}

// deepest is the first innermost cause: the most specific problem.
func deepest(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return ve
}

// jsonPath turns a JSON Pointer's tokens into a JSONPath suffix
// (["line_items", "0", "id"] → ".line_items[0].id").
func jsonPath(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		if t != "" && strings.Trim(t, "0123456789") == "" {
			sb.WriteString("[" + t + "]")
			continue
		}
		sb.WriteString("." + t)
	}
	return sb.String()
}
