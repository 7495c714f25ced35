package server

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop"
)

// AppsExtension is the MCP Apps extension's identifier in capabilities
// (initialize's capabilities.extensions): a server that serves UI templates
// declares it, and a host that renders them advertises it.
const AppsExtension = "io.modelcontextprotocol/ui"

// AppsMIMEType is the MIME type of an MCP Apps HTML template.
const AppsMIMEType = "text/html;profile=mcp-app"

// capabilities are the server's capabilities beside the tools and resources
// the SDK infers: logging, as the SDK's default has it, and the MCP Apps
// extension when a resource is an MCP Apps template (hosts such as Claude
// render no widget of a server that does not declare it).
func capabilities(resources []shop.Resource) *mcp.ServerCapabilities {
	//lint:ignore SA1019 logging stays while hosts speak protocols before 2026-07-28, as the SDK's default keeps it
	caps := &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}
	for _, r := range resources {
		if r.MIMEType == AppsMIMEType {
			caps.AddExtension(AppsExtension, map[string]any{"mimeTypes": []string{AppsMIMEType}})
			break
		}
	}
	return caps
}

// clientCapabilities logs, when a client introduces itself (initialize, or
// server/discover in the protocol of 2026-07-28), who it is and whether it
// renders MCP Apps. A client that does not still gets every tool: the
// render tools answer their data and a text, which it shows as it can.
func clientCapabilities(logger *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			var (
				client *mcp.Implementation
				caps   *mcp.ClientCapabilities
				proto  string
			)
			switch r := req.(type) {
			case *mcp.ServerRequest[*mcp.InitializeParams]:
				if r.Params != nil {
					client, caps, proto = r.Params.ClientInfo, r.Params.Capabilities, r.Params.ProtocolVersion
				}
			case *mcp.ServerRequest[*mcp.DiscoverParams]:
				client, caps, proto = r.ClientInfo(), r.ClientCapabilities(), r.ProtocolVersion()
			default:
				return next(ctx, method, req)
			}
			if client == nil {
				client = &mcp.Implementation{}
			}
			logger.InfoContext(ctx, "client initialized", "client", client.Name, "client_version", client.Version,
				"protocol", proto, "mcp_apps", rendersApps(caps))
			return next(ctx, method, req)
		}
	}
}

// rendersApps reports whether a client's capabilities advertise the MCP
// Apps extension with the template MIME type (or with no list of types).
func rendersApps(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	ext, ok := caps.Extensions[AppsExtension]
	if !ok {
		return false
	}
	settings, _ := ext.(map[string]any)
	types, listed := settings["mimeTypes"].([]any)
	if !listed {
		return true
	}
	for _, t := range types {
		if t == AppsMIMEType {
			return true
		}
	}
	return false
}
