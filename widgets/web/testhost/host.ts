// The browser tests' host: a minimal MCP Apps host built on ext-apps'
// AppBridge, as ChatGPT or Claude would render a widget. It is served by the
// Go test's own HTTP server (never by the shop), whose /mcp relays to the
// shop the way a host's backend calls an MCP server.
//
// It reads a widget's HTML with resources/read, loads it into a sandboxed
// iframe under the CSP of the resource's _meta.ui.csp, sends the tool input
// and result (or holds the result, as while the tool runs, until the test
// releases it), answers the widget's tools/call through the shop, records
// open-link, update-model-context and messages, and injects a window.openai
// whose requestCheckout calls complete_checkout with a Stripe test card, as
// ChatGPT's payment sheet does (or, with noSheet, none: a host without
// a payment sheet, where the widget pays through the shop's payment page);
// with sheets, the sheet does in turn what a test asks: the buyer closes it,
// it fails, or it answers a payment still in progress. It offers fullscreen
// when asked (ui/request-display-mode, window.openai.requestDisplayMode)
// and cancels the render tool on the test's word (tool-cancelled).
// open-link is recorded and opens nothing: the test opens the URL itself.
// CSP violations inside the widget are reported to the test.
//
// A page opened with #bearer=<token> acts for a linked buyer: its MCP
// client sends "Authorization: Bearer <token>" on every /mcp request, as a
// host does once the buyer linked their account. The token stays in the
// host page (the fragment never reaches a server); the widget calls tools
// through the host and never sees it.
//
// The Go test drives it through window.hostAPI (see load's options).

import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

interface LoadOptions {
  /** uri of the widget's resource, e.g. ui://shop/products-v1.html. */
  uri: string;
  /** tool and args: the render tool call whose result the widget shows. */
  tool: string;
  args: Record<string, unknown>;
  theme?: "light" | "dark";
  locale?: string;
  width?: number;
  /** openai: inject window.openai (ChatGPT); false renders as other hosts do. */
  openai?: boolean;
  /**
   * openaiOnly: a host that speaks window.openai alone, as ChatGPT injects it,
   * with no MCP Apps bridge: the output in toolOutput, tools/call through
   * callTool, the payment sheet through requestCheckout, links through
   * openExternal (recorded as open-link events, with via "openExternal").
   */
  openaiOnly?: boolean;
  /**
   * output, when set, is the tool output the host sends instead of calling
   * the tool: what a host kept of an old call, re-mounting the widget. null
   * sends none (the input alone).
   */
  output?: unknown;
  /** noSheet leaves requestCheckout out of window.openai: a host without a payment sheet. */
  noSheet?: boolean;
  /** cards: the tokens requestCheckout pays with, in turn (default pm_card_visa). */
  cards?: string[];
  /**
   * sheets: what each requestCheckout does in turn (default "pay"): pay with
   * the next card; "cancel": the buyer closes the sheet (an AbortError);
   * "fail": the sheet fails; "unknown": it answers the session as the shop
   * has it now (a test sets it in_progress first: a provider timeout).
   */
  sheets?: ("pay" | "cancel" | "fail" | "unknown")[];
  /** fullscreen: the host offers the fullscreen display mode. */
  fullscreen?: boolean;
  /** styles: host CSS variables sent in the host context. */
  styles?: Record<string, string>;
  /** evilImage: an image URL added to the tool result, which the CSP must block. */
  evilImage?: string;
  /**
   * display replaces the display of every checkout session the widget gets
   * (tool results and its own calls), as a policy with that convention would
   * have it: the figures stay the shop's.
   */
  display?: { prices_include_tax: boolean; tax_name: string };
  /** currencies: the currency of each product's prices in turn, replacing the shop's (amount formatting). */
  currencies?: string[];
  /**
   * holdResult sends the tool input but holds the result, as a host does while
   * the tool runs, until hostAPI.release(); load resolves once the input is sent.
   */
  holdResult?: boolean;
}

interface Event {
  kind: string;
  [k: string]: unknown;
}

const events: Event[] = [];
const widgetState = new Map<string, unknown>();
let client: Client | null = null;
let bridge: AppBridge | null = null;
let cards: string[] = [];
let sheets: string[] = [];
const noneHeld = () => Promise.reject(new Error("no tool result is held"));
let release: () => Promise<Record<string, number>> = noneHeld;
let display: LoadOptions["display"];

/** withDisplay sets the load's display on a tool result that is a checkout session. */
function withDisplay<T>(result: T): T {
  const sc = (result as { structuredContent?: Record<string, unknown> } | undefined)?.structuredContent;
  if (display && sc && "line_items" in sc) sc.display = display;
  return result;
}

// bearer is the linked buyer's access token the page was opened with ("" for a guest).
const bearer = new URLSearchParams(location.hash.slice(1)).get("bearer") ?? "";
// subject is the anonymous user id the page sends on every tool call
// (_meta["openai/subject"], as ChatGPT does) when opened with #subject=…:
// a buyer of its own, whom other tests' sessions do not count against.
const subject = new URLSearchParams(location.hash.slice(1)).get("subject") ?? "";

type CallParams = Parameters<Client["callTool"]>[0];

/** callShop calls a tool of the shop as this page's buyer. */
async function callShop(c: Client, p: CallParams): ReturnType<Client["callTool"]> {
  return c.callTool(subject ? { ...p, _meta: { ...(p._meta ?? {}), "openai/subject": subject } } : p);
}

async function mcp(): Promise<Client> {
  if (!client) {
    const c = new Client({ name: "shop-test-host", version: "1" });
    const authProvider = bearer ? { token: async () => bearer } : undefined;
    await c.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href), { authProvider }));
    client = c;
  }
  return client;
}

function cspOf(meta: unknown): string {
  const csp = ((meta as { ui?: { csp?: Record<string, unknown> } })?.ui?.csp ?? {}) as Record<string, unknown>;
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  const res = list(csp.resourceDomains).join(" ");
  const conn = list(csp.connectDomains).join(" ");
  return [
    "default-src 'none'",
    "script-src 'unsafe-inline'",
    "style-src 'unsafe-inline'",
    `img-src ${res || "'none'"}`,
    `font-src ${res || "'none'"}`,
    `media-src ${res || "'none'"}`,
    `connect-src ${conn || "'none'"}`,
    "frame-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

// shim runs first inside the widget's document: it reports CSP violations and
// the widget's first render, and (for ChatGPT) defines window.openai.
function shim(o: LoadOptions, state: unknown, toolOutput: unknown): string {
  const cfg = JSON.stringify({ openai: !!o.openai || !!o.openaiOnly, only: !!o.openaiOnly, sheet: !o.noSheet, fullscreen: !!o.fullscreen, theme: o.theme ?? "light", locale: o.locale ?? "en-US", state, toolOutput, toolInput: o.args });
  return `<script>(() => {
  const cfg = ${cfg.replace(/</g, "\\u003c")};
  const post = (m) => parent.postMessage(Object.assign({ __testhost: true }, m), "*");
  document.addEventListener("securitypolicyviolation", (e) => post({ kind: "csp", blockedURI: e.blockedURI, directive: e.effectiveDirective }));
  const seen = () => { if (document.body && document.body.dataset.state === "ready") { post({ kind: "rendered" }); obs.disconnect(); return true; } };
  const obs = new MutationObserver(seen);
  obs.observe(document.documentElement, { subtree: true, attributes: true, attributeFilter: ["data-state"] });
  if (!cfg.openai) return;
  const pending = new Map();
  let next = 1;
  window.addEventListener("message", (e) => {
    const d = e.data;
    if (e.source !== parent || !d || !d.__testhost || (d.kind !== "checkout-result" && d.kind !== "call-result")) return;
    const p = pending.get(d.id);
    pending.delete(d.id);
    if (p) d.error ? p.reject(Object.assign(new Error(d.error), { name: d.name || "Error" })) : p.resolve(d.result);
  });
  window.openai = {
    theme: cfg.theme, locale: cfg.locale, displayMode: "inline", maxHeight: 2000,
    toolInput: cfg.toolInput, toolOutput: cfg.toolOutput, widgetState: cfg.state,
    setWidgetState(s) { this.widgetState = s; post({ kind: "widget-state", state: s }); return Promise.resolve(); },
    requestCheckout(session) {
      const id = next++;
      return new Promise((resolve, reject) => { pending.set(id, { resolve, reject }); post({ kind: "checkout", id, session }); });
    },
  };
  if (!cfg.sheet) delete window.openai.requestCheckout;
  // As ChatGPT does, the granted mode becomes window.openai.displayMode, announced with openai:set_globals.
  if (cfg.fullscreen) window.openai.requestDisplayMode = ({ mode }) => {
    post({ kind: "display-mode", mode });
    window.openai.displayMode = mode;
    window.dispatchEvent(new CustomEvent("openai:set_globals", { detail: { globals: { displayMode: mode } } }));
    return Promise.resolve({ mode });
  };
  if (!cfg.only) return;
  // ChatGPT without the MCP Apps bridge: tools and links through window.openai.
  window.openai.callTool = (name, args) => {
    const id = next++;
    return new Promise((resolve, reject) => { pending.set(id, { resolve, reject }); post({ kind: "call-tool", id, name, args }); });
  };
  window.openai.openExternal = ({ href }) => { post({ kind: "open-external", href }); };
})();</script>`;
}

function inject(html: string, head: string): string {
  const at = html.search(/<head[^>]*>/i);
  if (at < 0) return head + html;
  const end = html.indexOf(">", at) + 1;
  return html.slice(0, end) + head + html.slice(end);
}

async function requestCheckout(frame: Window, id: number, session: { id?: string }) {
  const mode = sheets.shift() ?? "pay";
  const token = mode === "pay" ? (cards.shift() ?? "pm_card_visa") : "";
  events.push({ kind: "checkout", session_id: session?.id, token, mode });
  const fail = (name: string, error: string) => frame.postMessage({ __testhost: true, kind: "checkout-result", id, name, error }, "*");
  if (mode === "cancel") return fail("AbortError", "The buyer closed the payment sheet.");
  if (mode === "fail") return fail("Error", "The payment sheet is unavailable.");
  try {
    const c = await mcp();
    if (mode === "unknown") {
      const result = await callShop(c, { name: "get_checkout_session", arguments: { checkout_session_id: session?.id } });
      frame.postMessage({ __testhost: true, kind: "checkout-result", id, result }, "*");
      return;
    }
    const result = await callShop(c, {
      name: "complete_checkout",
      arguments: { checkout_session_id: session?.id, buyer: null, payment_data: { token, provider: "stripe" } },
    });
    frame.postMessage({ __testhost: true, kind: "checkout-result", id, result }, "*");
  } catch (e) {
    frame.postMessage({ __testhost: true, kind: "checkout-result", id, error: String(e) }, "*");
  }
}

// callTool answers window.openai.callTool as ChatGPT does: the tool's result
// (structuredContent, content, isError), recorded as a tools/call event.
async function callTool(frame: Window, id: number, name: string, args: Record<string, unknown>) {
  events.push({ kind: "tools/call", name, arguments: args, via: "callTool" });
  try {
    const result = withDisplay(await callShop(await mcp(), { name, arguments: args }));
    frame.postMessage({ __testhost: true, kind: "call-result", id, result }, "*");
  } catch (e) {
    frame.postMessage({ __testhost: true, kind: "call-result", id, error: String(e) }, "*");
  }
}

/** load renders a widget and resolves once it has rendered its data. */
async function load(o: LoadOptions): Promise<Record<string, number>> {
  const c = await mcp();
  cards = [...(o.cards ?? [])];
  sheets = [...(o.sheets ?? [])];
  display = o.display;
  release = noneHeld;
  const t0 = performance.now();
  const read = await c.readResource({ uri: o.uri });
  const content = read.contents[0] as { text?: string; mimeType?: string; _meta?: unknown };
  if (content?.mimeType !== "text/html;profile=mcp-app" || typeof content.text !== "string") {
    throw new Error(`resources/read ${o.uri}: mimeType ${content?.mimeType}, no HTML text`);
  }
  const readMs = performance.now() - t0;
  const kept = "output" in o;
  const result = kept
    ? ({ content: [], structuredContent: o.output ?? undefined } as Awaited<ReturnType<Client["callTool"]>>)
    : await callShop(c, { name: o.tool, arguments: o.args });
  withDisplay(result);
  if (o.evilImage) {
    const sc = result.structuredContent as { products?: { images?: string[]; variants?: { image_url?: string }[] }[] };
    for (const p of sc.products ?? []) {
      p.images = [o.evilImage];
      for (const v of p.variants ?? []) v.image_url = o.evilImage;
    }
  }
  if (o.currencies?.length) {
    type Price = { currency?: string };
    const sc = result.structuredContent as { products?: { price_range?: { min?: Price; max?: Price }; variants?: { price?: Price }[] }[] };
    (sc.products ?? []).forEach((p, i) => {
      const c = o.currencies![i % o.currencies!.length];
      for (const x of [p.price_range?.min, p.price_range?.max, ...(p.variants ?? []).map((v) => v.price)]) if (x) x.currency = c;
    });
  }
  const hold = !!o.holdResult;
  const csp = cspOf(content._meta);
  const head =
    `<meta http-equiv="Content-Security-Policy" content="${csp}">` +
    shim(o, widgetState.get(o.uri), (o.openai || o.openaiOnly) && !hold ? result.structuredContent : undefined);

  await bridge?.close().catch(() => {});
  const box = document.getElementById("frame")!;
  box.replaceChildren();
  const iframe = document.createElement("iframe");
  iframe.title = "widget";
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.style.cssText = `width:${o.width ?? 480}px;height:600px;border:1px solid #888;display:block`;
  box.append(iframe);
  const frame = iframe.contentWindow!;

  // rendered resolves with the time the widget first showed its data.
  let rendered: (at: number) => void;
  const renderedP = new Promise<number>((r) => (rendered = r));
  let inputSent: () => void;
  const inputSentP = new Promise<void>((r) => (inputSent = r));
  window.onmessage = (e) => {
    const d = e.data;
    if (e.source !== frame || !d?.__testhost) return;
    if (d.kind === "csp") events.push({ kind: "csp", blockedURI: d.blockedURI, directive: d.directive });
    if (d.kind === "rendered") rendered(performance.now());
    if (d.kind === "widget-state") widgetState.set(o.uri, d.state);
    if (d.kind === "checkout") void requestCheckout(frame, d.id, d.session);
    if (d.kind === "call-tool") void callTool(frame, d.id, d.name, d.args);
    if (d.kind === "open-external") events.push({ kind: "open-link", url: d.href, via: "openExternal" });
    if (d.kind === "display-mode") events.push({ kind: "display-mode", mode: d.mode, via: "openai" });
  };
  const timeout = (what: string) => new Promise<never>((_, rej) => setTimeout(() => rej(new Error(`the widget did not ${what} in 15s`)), 15000));
  if (o.openaiOnly) {
    const t1 = performance.now();
    iframe.srcdoc = inject(content.text, head);
    const firstRenderMs = (await Promise.race([renderedP, timeout("render")])) - t1;
    return { readMs, firstRenderMs, bytes: content.text.length };
  }

  const theme = o.theme ?? "light";
  const hostContext = {
    theme,
    locale: o.locale ?? "en-US",
    platform: "web" as const,
    displayMode: "inline" as "inline" | "fullscreen",
    availableDisplayModes: (o.fullscreen ? ["inline", "fullscreen"] : ["inline"]) as ("inline" | "fullscreen")[],
    containerDimensions: { width: o.width ?? 480, maxHeight: 2000 },
    styles: { variables: (o.styles ?? {}) as never },
  };
  const b = new AppBridge(
    c,
    { name: "shop-test-host", version: "1" },
    { openLinks: {}, serverTools: {}, serverResources: {}, logging: {}, updateModelContext: { text: {}, structuredContent: {} }, message: { text: {} } },
    { hostContext },
  );
  bridge = b;
  b.onopenlink = async (p) => {
    // Recorded, not opened: the Go test opens the URL in a tab of its own.
    events.push({ kind: "open-link", url: p.url });
    return {};
  };
  b.onupdatemodelcontext = async (p) => {
    events.push({ kind: "model-context", text: p.content?.map((x) => ("text" in x ? x.text : "")).join(" "), structured: p.structuredContent });
    return {};
  };
  b.onmessage = async (p) => {
    events.push({ kind: "message", content: p.content });
    return {};
  };
  // The granted mode is the host's display mode from then on (host-context-changed).
  b.onrequestdisplaymode = async ({ mode }) => {
    events.push({ kind: "display-mode", mode });
    hostContext.displayMode = o.fullscreen && mode === "fullscreen" ? "fullscreen" : "inline";
    setTimeout(() => b.setHostContext({ ...hostContext }), 0);
    return { mode: hostContext.displayMode };
  };
  b.onsizechange = ({ height }) => {
    if (height) iframe.style.height = Math.min(Math.ceil(height) + 2, 4000) + "px";
  };
  b.oninitialized = () => {
    events.push({ kind: "app-capabilities", modes: b.getAppCapabilities()?.availableDisplayModes ?? [] });
    void b.sendToolInput({ arguments: o.args }).then(() => {
      inputSent();
      if (!hold && !(kept && o.output === null)) return b.sendToolResult(result as never);
    });
  };
  await b.connect(new PostMessageTransport(frame, frame));
  // connect forwards tools/call to the client; record each call on the way.
  b.oncalltool = async (p) => {
    events.push({ kind: "tools/call", name: p.name, arguments: p.arguments });
    return withDisplay(await callShop(c, p)) as never;
  };
  const t1 = performance.now();
  iframe.srcdoc = inject(content.text, head);
  if (hold) {
    await Promise.race([inputSentP, timeout("take the tool input")]);
    release = async () => {
      release = noneHeld;
      const t = performance.now();
      await b.sendToolResult(result as never);
      return { firstRenderMs: (await Promise.race([renderedP, timeout("render")])) - t };
    };
    return { readMs, firstRenderMs: 0, bytes: content.text.length };
  }
  const firstRenderMs = (await Promise.race([renderedP, timeout("render")])) - t1;
  return { readMs, firstRenderMs, bytes: content.text.length };
}

/** call runs a tool of the shop, for a test's setup. */
async function call(name: string, args: Record<string, unknown>): Promise<unknown> {
  const res = await callShop(await mcp(), { name, arguments: args });
  return res.structuredContent;
}

(window as unknown as { hostAPI: unknown }).hostAPI = {
  load,
  call,
  events,
  setCards: (c: string[]) => (cards = [...c]),
  /** release sends the tool result a load with holdResult held; it resolves once the widget shows it. */
  release: () => release(),
  /** cancel tells the widget its render tool was cancelled (ui/notifications/tool-cancelled). */
  cancel: (reason: string) => bridge!.sendToolCancelled({ reason }),
  /** widget returns the widget's iframe element, for the test to query inside. */
  widget: () => document.querySelector("#frame iframe"),
};
document.body.insertAdjacentHTML("afterbegin", '<div id="frame"></div>');
