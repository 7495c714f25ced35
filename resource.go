package shop

import "context"

// Resource is an MCP resource as a part of the shop declares it, free of any
// MCP library's types (like Tool): package server registers it and reads it
// for the caller. The widgets' HTML templates are resources.
type Resource struct {
	// URI names the resource ("ui://shop/products-v1.html"); a template's URI
	// is a cache key, so an incompatible change ships under a new one.
	URI string
	// Name is a short identifier, Title a human-readable name, Description
	// what the resource is.
	Name, Title, Description string
	// MIMEType is the content's type ("text/html;profile=mcp-app").
	MIMEType string
	// Meta is the resource's _meta, sent on both its resources/list entry and
	// its resources/read content; may be nil.
	Meta map[string]any
	// MetaFor, when set, gives the _meta at each resources/list and
	// resources/read instead of Meta, for a _meta that follows data which
	// may change while the shop runs (the widgets' CSP names the catalog's
	// image hosts). It must answer quickly and never fail: on trouble it
	// logs and falls back to what it can say.
	MetaFor func(ctx context.Context) map[string]any
	// Read returns the resource's text. A returned *Error reaches the caller
	// as it is; any other error is logged and answered generically.
	Read func(ctx context.Context) (string, error)
}
