package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop"
)

// MCPOptions describe an MCP server of the shop.
type MCPOptions struct {
	// Name and Title identify the server to clients ("shop", the merchant's name).
	Name, Title, Version string
	// Instructions tell the model what the server is for.
	Instructions string
	// Tools are the tools it serves.
	Tools []shop.Tool
	// Resources are the resources it serves (the widgets' templates).
	Resources []shop.Resource
	// Logger receives one line per tool call and every internal error.
	Logger *slog.Logger
	// Actor, when set, is the identity of every caller that brings none
	// (`shop admin` over stdio: the merchant on their own machine).
	Actor *shop.Actor
	// Observe, when set, is told of every tool call: the tool, its outcome
	// (OutcomeOK, OutcomeRefused or OutcomeError) and how long it took (the
	// operator's metrics).
	Observe func(tool, outcome string, took time.Duration)
	// Challenge, when set, is the WWW-Authenticate challenge that starts
	// linking the buyer's account for the given scopes (see BearerAuth);
	// an account tool called by a buyer it does not allow answers it in
	// its result's _meta["mcp/www_authenticate"]. When set, the server
	// links buyers' accounts, and each tool's descriptor declares its
	// securitySchemes in its _meta.
	Challenge func(scopes []string) string
}

// The outcomes of a tool call, as Observe is told them.
const (
	OutcomeOK      = "ok"      // answered, a declined card included
	OutcomeRefused = "refused" // an error the caller can act on (a *shop.Error: missing, invalid, not_found, …)
	OutcomeError   = "error"   // an internal error, a panic, a canceled call
)

// actorContext puts the caller's identity in ctx: the one its bearer token
// carries (see AdminAuth), else fallback.
func actorContext(ctx context.Context, req *mcp.CallToolRequest, fallback *shop.Actor) context.Context {
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		if a, ok := req.Extra.TokenInfo.Extra[actorExtra].(shop.Actor); ok {
			return shop.WithActor(ctx, a)
		}
	}
	if fallback != nil {
		return shop.WithActor(ctx, *fallback)
	}
	return ctx
}

// buyerContext puts the caller's host user id, as the call's own _meta
// carries it, into the shop.Buyer of ctx, keeping the client address that
// the HTTP server put there (none over stdio).
func buyerContext(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	b := shop.BuyerFrom(ctx)
	meta := req.Params.GetMeta()
	b.Subject = hostSubject(meta)
	return shop.WithLocale(shop.WithBuyer(ctx, b), hostLocale(meta, req.Extra))
}

// hostLocale is the buyer's locale as the host says it: ChatGPT's
// _meta["openai/locale"], else the first language of the request's
// Accept-Language (shop.WithLocale checks its shape).
func hostLocale(meta map[string]any, extra *mcp.RequestExtra) string {
	if s, ok := meta["openai/locale"].(string); ok && s != "" {
		return s
	}
	if extra == nil || extra.Header == nil {
		return ""
	}
	first, _, _ := strings.Cut(extra.Header.Get("Accept-Language"), ",")
	first, _, _ = strings.Cut(first, ";")
	return first
}

// NewMCP returns an MCP server offering the given tools and resources. It is the one place
// where a tool's error becomes what the caller sees: a *shop.Error keeps its
// message and code; anything else is logged with its detail and answered
// with a generic text, so no SQL or provider JSON reaches the model.
func NewMCP(opts MCPOptions) *mcp.Server {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: opts.Name, Title: opts.Title, Version: opts.Version},
		&mcp.ServerOptions{Instructions: opts.Instructions, Logger: quiet(logger), Capabilities: capabilities(opts.Resources)})
	srv.AddReceivingMiddleware(clientCapabilities(logger), noPrompts)
	full := make(map[string]json.RawMessage, len(opts.Tools))
	var schemes map[string][]shop.SecurityScheme
	if opts.Challenge != nil {
		schemes = make(map[string][]shop.SecurityScheme, len(opts.Tools))
	}
	for _, t := range opts.Tools {
		tool := mcpTool(t, opts.Challenge != nil)
		full[t.Name], tool.InputSchema = t.InputSchema, leanSchema(t.InputSchema)
		if schemes != nil {
			schemes[t.Name] = t.Auth.SecuritySchemes()
		}
		srv.AddTool(tool, handler(t, opts, logger))
	}
	srv.AddReceivingMiddleware(fullSchemas(full, schemes))
	live := map[string]func(context.Context) map[string]any{}
	for _, r := range opts.Resources {
		srv.AddResource(mcpResource(r), resourceHandler(r, logger))
		if r.MetaFor != nil {
			live[r.URI] = r.MetaFor
		}
	}
	if len(live) > 0 {
		srv.AddReceivingMiddleware(listMeta(live))
	}
	return srv
}

// noPrompts answers prompts/list and prompts/get with -32601 (Method not
// found): the shop's servers declare no prompts capability, and MCP asks a
// server to answer only what it declares (go-sdk would list none).
func noPrompts(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "prompts/list" || method == "prompts/get" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: this server declares no prompts"}
		}
		return next(ctx, method, req)
	}
}

// listMeta gives the resources/list entries of resources with a MetaFor the
// _meta it answers for this request. The entries are copied, never changed
// in place: the server keeps the registered ones.
func listMeta(live map[string]func(context.Context) map[string]any) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			list, ok := res.(*mcp.ListResourcesResult)
			if err != nil || method != "resources/list" || !ok {
				return res, err
			}
			out := *list
			out.Resources = make([]*mcp.Resource, len(list.Resources))
			for i, r := range list.Resources {
				if metaFor, ok := live[r.URI]; ok {
					c := *r
					c.Meta = metaFor(ctx)
					r = &c
				}
				out.Resources[i] = r
			}
			return &out, nil
		}
	}
}

func mcpTool(t shop.Tool, schemes bool) *mcp.Tool {
	destructive, openWorld := t.Destructive, false
	var output any
	if t.OutputSchema != nil {
		output = outputSchema(t.OutputSchema)
	}
	return &mcp.Tool{
		Name:         t.Name,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  t.InputSchema,
		OutputSchema: output,
		Annotations: &mcp.ToolAnnotations{
			Title:           t.Title,
			ReadOnlyHint:    t.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.Idempotent,
			OpenWorldHint:   &openWorld,
		},
		Meta: toolMeta(t, schemes),
	}
}

// toolMeta is t's _meta with its securitySchemes (shop.AuthRequirement),
// which hosts read there as well as at the top of the descriptor.
func toolMeta(t shop.Tool, schemes bool) map[string]any {
	if !schemes {
		return t.Meta
	}
	meta := make(map[string]any, len(t.Meta)+1)
	for k, v := range t.Meta {
		meta[k] = v
	}
	meta["securitySchemes"] = t.Auth.SecuritySchemes()
	return meta
}

// deniedResult answers an account tool called by a buyer it does not allow
// (no linked account, or a token without its scopes): a refusal the model
// can act on, with the challenge that lets the host start linking.
func deniedResult(ctx context.Context, logger *slog.Logger, t shop.Tool, b shop.Buyer, challenge func([]string) string, attrs []any) *mcp.CallToolResult {
	res := errorResult(ctx, logger, t.Name, t.Auth.Denied(b), attrs)
	if challenge != nil {
		res.Meta = mcp.Meta{"mcp/www_authenticate": []string{challenge(t.Auth.Scopes)}}
	}
	return res
}

// toolError is the structured content of a failed tool call: widgets and
// clients read the code and the param of the field to fix from it.
type toolError struct {
	Error struct {
		Code    shop.Code         `json:"code" jsonschema:"Why the call was refused: invalid, missing, not_found, forbidden, conflict, unavailable and the like."`
		Param   string            `json:"param,omitempty" jsonschema:"The JSONPath of the argument to fix, such as $.limit."`
		Message string            `json:"message" jsonschema:"What to send instead, for people and models."`
		Key     string            `json:"key,omitempty" jsonschema:"The situation's key in the message catalogs (docs/messages.md), such as promo.unknown."`
		Params  map[string]string `json:"params,omitempty" jsonschema:"The values the catalog's sentence needs, by name."`
	} `json:"error"`
}

// toolErrorSchema is the JSON Schema of toolError.
var toolErrorSchema = func() json.RawMessage {
	s, err := shop.SchemaFor[toolError](false)
	if err != nil {
		panic(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}()

// outputSchema is a tool's outputSchema as tools/list answers it: the
// structured content of a success, or that of a refusal (toolError), so
// that a host validating an isError result against it accepts it too.
func outputSchema(success json.RawMessage) json.RawMessage {
	b, err := json.Marshal(map[string]any{"type": "object", "anyOf": []json.RawMessage{success, toolErrorSchema}})
	if err != nil {
		panic(err) // both are valid JSON
	}
	return b
}

// internalMessage answers any error that is not a *shop.Error.
const internalMessage = "The shop could not complete this request because of an internal error; it has been logged. Try again in a moment."

func handler(t shop.Tool, opts MCPOptions, logger *slog.Logger) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (out *mcp.CallToolResult, _ error) {
		start := time.Now()
		defer func() {
			if p := recover(); p != nil {
				attrs := []any{"tool", t.Name, "duration", time.Since(start).Round(time.Microsecond)}
				out = errorResult(ctx, logger, t.Name, fmt.Errorf("panic: %v", p), attrs)
			}
			if opts.Observe != nil {
				opts.Observe(t.Name, outcome(out), time.Since(start))
			}
		}()
		ctx = shop.WithOperation(actorContext(ctx, req, opts.Actor), t.Name)
		ctx = buyerContext(ctx, req)
		if b := shop.BuyerFrom(ctx); !t.Auth.Allows(b) {
			attrs := []any{"tool", t.Name, "duration", time.Since(start).Round(time.Microsecond)}
			return deniedResult(ctx, logger, t, b, opts.Challenge, attrs), nil
		}
		res, err := t.Handle(ctx, req.Params.Arguments)
		attrs := []any{"tool", t.Name, "duration", time.Since(start).Round(time.Microsecond)}
		if pe, ok := errors.AsType[*shop.ProtocolError](err); ok {
			return nil, protocolError(ctx, logger, pe, attrs)
		}
		if err != nil {
			return errorResult(ctx, logger, t.Name, err, attrs), nil
		}
		// A call answered is logged at debug: a line at every call would cost
		// more than a search's own work, and the metrics count the calls and
		// their times by tool and outcome. SHOP_LOG_LEVEL=debug shows them;
		// refusals and errors stay above.
		logger.DebugContext(ctx, "tool call", attrs...)
		// The value itself, which go-sdk encodes with the rest of the
		// answer: encoded here first, it was compacted once more on the
		// way (a few KB of a session or a page of products, each call).
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: res.Text}},
			StructuredContent: res.Structured,
		}, nil
	}
}

// outcome is what a tool call's result says of it, for Observe.
func outcome(res *mcp.CallToolResult) string {
	if res == nil || !res.IsError {
		return OutcomeOK
	}
	if te, ok := res.StructuredContent.(toolError); ok && te.Error.Code != "" && te.Error.Code != shop.Unavailable {
		return OutcomeRefused
	}
	return OutcomeError
}

func errorResult(ctx context.Context, logger *slog.Logger, tool string, err error, attrs []any) *mcp.CallToolResult {
	var te toolError
	var e *shop.Error
	switch {
	case errors.As(err, &e):
		te.Error.Code, te.Error.Param, te.Error.Message = e.Code, e.Param, e.Message
		te.Error.Key, te.Error.Params = e.Key, e.Params
		logger.InfoContext(ctx, "tool call refused", append(attrs, "code", e.Code, "param", e.Param)...)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		te.Error.Code, te.Error.Message = shop.Unavailable, "The request was canceled or took too long; try again."
		logger.WarnContext(ctx, "tool call canceled", append(attrs, "err", err)...)
	default:
		te.Error.Code, te.Error.Message = shop.Unavailable, internalMessage
		logger.ErrorContext(ctx, "tool call failed", append(attrs, "err", err)...)
	}
	text := te.Error.Message
	if te.Error.Param != "" {
		text = te.Error.Param + ": " + text
	}
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: te,
	}
}

// mcpResource is the resources/list entry of r; its _meta is r.Meta (or
// r.MetaFor's, see listMeta), as on the content resources/read answers, so
// hosts that read either find it.
func mcpResource(r shop.Resource) *mcp.Resource {
	return &mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType, Meta: r.Meta}
}

// resourceHandler reads r for resources/read. Errors are translated as a
// tool's are: a *shop.Error keeps its message, anything else is logged and
// answered with a generic text.
func resourceHandler(r shop.Resource, logger *slog.Logger) mcp.ResourceHandler {
	return func(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		start := time.Now()
		text, err := r.Read(ctx)
		attrs := []any{"resource", r.URI, "duration", time.Since(start).Round(time.Microsecond)}
		if err != nil {
			var e *shop.Error
			if errors.As(err, &e) {
				logger.InfoContext(ctx, "resource read refused", append(attrs, "code", e.Code)...)
				return nil, e
			}
			logger.ErrorContext(ctx, "resource read failed", append(attrs, "err", err)...)
			return nil, &shop.Error{Code: shop.Unavailable, Message: internalMessage}
		}
		logger.InfoContext(ctx, "resource read", attrs...)
		meta := r.Meta
		if r.MetaFor != nil {
			meta = r.MetaFor(ctx)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: r.URI, MIMEType: r.MIMEType, Text: text, Meta: meta,
		}}}, nil
	}
}
