package acp

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Discovery is the ACP discovery document (/.well-known/acp.json): the
// versions the shop speaks and its transport, MCP, whose endpoint is
// publicURL/acp/mcp (the binding leaves the endpoint out of the document;
// api_base_url, which the schema requires, names the ACP base).
type Discovery struct {
	Protocol struct {
		Name              string   `json:"name"`
		Version           string   `json:"version"`
		SupportedVersions []string `json:"supported_versions"`
	} `json:"protocol"`
	APIBaseURL   string   `json:"api_base_url"`
	Transports   []string `json:"transports"`
	Capabilities struct {
		Services            []string `json:"services"`
		SupportedCurrencies []string `json:"supported_currencies"`
	} `json:"capabilities"`
}

// Discovery returns the shop's discovery document.
func (a *ACP) Discovery(publicURL string) Discovery {
	var d Discovery
	d.Protocol.Name, d.Protocol.Version, d.Protocol.SupportedVersions = "acp", Version, agentVersions()
	d.APIBaseURL = strings.TrimRight(publicURL, "/") + "/acp"
	d.Transports = []string{"mcp"}
	d.Capabilities.Services = []string{"checkout"}
	d.Capabilities.SupportedCurrencies = []string{a.currency}
	return d
}

// DiscoveryHandler serves the discovery document, cacheable for an hour.
func (a *ACP) DiscoveryHandler(publicURL string) http.Handler {
	body, err := json.MarshalIndent(a.Discovery(publicURL), "", "  ")
	if err != nil {
		panic(err) // strings only
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write(append(body, '\n'))
	})
}
