// Links a buyer's account with the shop as an MCP host does, through the
// TypeScript MCP SDK's OAuth client: auth() with an OAuthClientProvider
// discovers the authorization server from the protected resource metadata
// of /mcp, names itself by a client metadata document (mode "cimd") or
// registers dynamically (mode "dcr"), and sends the buyer to the
// authorization URL with PKCE S256 and a state; mode "stateless" is "cimd"
// with a provider that has no state(), so that auth() sends none (OAuth
// 2.1 makes it optional with PKCE) and the redirect must bring none back. The buyer's part (the login and consent
// pages) is played by the Go test that runs this script: it reads the
// authorization URL from stdout ({"authorize": url}) and writes back the
// URL the shop redirected to. Then the script exchanges the code, calls
// /mcp with the token, refreshes it, and prints what it saw as one JSON
// line ({"ok": true, …}); any failure exits 1 with the reason.
//
//   node run.mjs <shop URL> <cimd|dcr|stateless> <client metadata URL> <redirect URL>
import { createInterface } from "node:readline";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [shopURL, mode, metadataURL, redirectURL] = process.argv.slice(2);
const serverUrl = new URL("/mcp", shopURL);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

class Provider {
  constructor() {
    this.saved = {};
    if (mode !== "dcr") this.clientMetadataUrl = metadataURL;
  }
  get redirectUrl() { return redirectURL; }
  get clientMetadata() {
    return { client_name: "Link Test (" + mode + ")", redirect_uris: [redirectURL], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() { return this.saved.client; }
  saveClientInformation(info) { this.saved.client = info; }
  tokens() { return this.saved.tokens; }
  saveTokens(tokens) { this.saved.tokens = tokens; }
  saveCodeVerifier(v) { this.saved.verifier = v; }
  codeVerifier() { return this.saved.verifier; }
  redirectToAuthorization(url) { this.authorizeURL = url; console.log(JSON.stringify({ authorize: url.href })); }
  invalidateCredentials(scope) { if (scope === "all" || scope === "tokens") delete this.saved.tokens; }
}

// StatefulProvider sends a state, as most hosts do.
class StatefulProvider extends Provider {
  constructor() { super(); this._state = "state-" + crypto.randomUUID(); }
  state() { return this._state; }
}

function fail(why) { console.error(why); process.exit(1); }

const provider = mode === "stateless" ? new Provider() : new StatefulProvider();
if ((await auth(provider, { serverUrl })) !== "REDIRECT") fail("auth() did not ask for the buyer's authorization");
const asked = provider.authorizeURL.searchParams;
if (asked.get("code_challenge_method") !== "S256" || !asked.get("code_challenge")) fail("no PKCE S256 in " + provider.authorizeURL);
if (asked.get("resource") !== serverUrl.href) fail("resource " + asked.get("resource") + ", want " + serverUrl.href);
if (mode !== "dcr" && asked.get("client_id") !== metadataURL) fail("client_id " + asked.get("client_id") + " is not the metadata document's URL");
if (asked.has("state") !== (mode !== "stateless")) fail("state " + asked.get("state") + " in " + provider.authorizeURL);
if (mode === "dcr" && asked.get("client_id") === metadataURL) fail("dcr mode used the metadata document");

const { value: back } = await lines.next();
const callback = new URL(back.trim()).searchParams;
if (callback.get("state") !== (provider._state ?? null)) fail("state " + callback.get("state") + " is not the one sent (" + provider._state + ")");
if (callback.get("iss") !== new URL(shopURL).origin) fail("iss " + callback.get("iss") + ", want " + new URL(shopURL).origin);
const code = callback.get("code");
if (!code) fail("no code in " + back);
if ((await auth(provider, { serverUrl, authorizationCode: code })) !== "AUTHORIZED") fail("the code was not exchanged");
const first = provider.tokens();

const client = new Client({ name: "shop-link-test", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
const { tools } = await client.listTools();
const unschemed = tools.filter((t) => !Array.isArray(t._meta?.securitySchemes) || t._meta.securitySchemes.length === 0);
if (unschemed.length > 0) fail("tools without securitySchemes: " + unschemed.map((t) => t.name).join(", "));
const search = await client.callTool({ name: "search_products", arguments: { query: "mug" } });
if (search.isError) fail("search_products with the token: " + JSON.stringify(search.content));
await client.close();

// A refresh rotates the refresh token.
provider.saved.tokens = { ...first, access_token: "expired" };
const refreshed = await fetch(new URL("/oauth/token", shopURL), { method: "POST", body: new URLSearchParams({
  grant_type: "refresh_token", refresh_token: first.refresh_token, client_id: provider.saved.client.client_id, resource: serverUrl.href }) });
const next = await refreshed.json();
if (!refreshed.ok || !next.access_token || next.refresh_token === first.refresh_token) fail("refresh: " + JSON.stringify(next));

console.log(JSON.stringify({ ok: true, access_token: next.access_token, client_id: provider.saved.client.client_id, tools: tools.length,
  schemes: Object.fromEntries(tools.map((t) => [t.name, t._meta.securitySchemes])) }));
process.exit(0);
