package main

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"shop/server"
)

// acpMCP is the MCP server of the ACP binding (/acp/mcp).
func (a *app) acpMCP(m *Main) *mcp.Server {
	return server.NewMCP(server.MCPOptions{
		Name:    "shop-acp",
		Title:   a.policy.Name + " (Agentic Commerce Protocol)",
		Version: version(),
		Instructions: "The Agentic Commerce Protocol's MCP binding (API version 2026-04-17) for " + a.policy.Name +
			": create_checkout_session, get_checkout_session, update_checkout_session, complete_checkout_session and " +
			"cancel_checkout_session, each taking {meta: {api_version, idempotency_key?}, id, payload}.",
		Tools:  a.acp.Tools(),
		Logger: m.Logger,
	})
}
