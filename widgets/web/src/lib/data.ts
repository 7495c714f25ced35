// The shapes of CONTRACT.md §3 and §4 as the widgets read them. Everything
// here comes from a tool result, which the widgets treat as untrusted input:
// each reader keeps only fields of the expected type, bounds lengths, and
// never throws, so a malformed result renders as "nothing to show" instead of
// breaking the widget. Text is rendered by Preact as text (never as HTML),
// and URLs pass safeURL before they reach an attribute.

export type Obj = Record<string, unknown>;

export function obj(v: unknown): Obj {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {};
}

export function str(v: unknown, max = 2000): string {
  return typeof v === "string" ? v.slice(0, max) : "";
}

export function int(v: unknown): number {
  return typeof v === "number" && Number.isSafeInteger(v) ? v : 0;
}

export function list<T>(v: unknown, read: (x: unknown) => T | null, max = 200): T[] {
  if (!Array.isArray(v)) return [];
  const out: T[] = [];
  for (const x of v.slice(0, max)) {
    const r = read(x);
    if (r !== null) out.push(r);
  }
  return out;
}

/** safeURL returns u when it is an absolute http(s) URL, else "". */
export function safeURL(u: unknown): string {
  const s = str(u, 4000);
  if (!s) return "";
  try {
    const url = new URL(s);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : "";
  } catch {
    return "";
  }
}

export interface Price {
  amount: number;
  currency: string;
  display: string;
}

export function price(v: unknown): Price {
  const o = obj(v);
  return { amount: int(o.amount), currency: str(o.currency, 3), display: str(o.display, 40) };
}

export interface Variant {
  id: string;
  title: string;
  options: [string, string][];
  price: Price;
  available: number;
  image: string;
}

export interface Product {
  id: string;
  title: string;
  description: string;
  category: string;
  images: string[];
  variants: Variant[];
}

function variant(v: unknown): Variant | null {
  const o = obj(v);
  const id = str(o.id, 64);
  if (!id) return null;
  const options = Object.entries(obj(o.options))
    .slice(0, 10)
    .map(([k, x]) => [k.slice(0, 60), str(x, 60)] as [string, string]);
  return {
    id,
    title: str(o.title, 200) || id,
    options,
    price: price(o.price),
    available: Math.max(0, int(o.available)),
    image: safeURL(o.image_url),
  };
}

export function product(v: unknown): Product | null {
  const o = obj(v);
  const id = str(o.id, 64);
  if (!id) return null;
  return {
    id,
    title: str(o.title, 200) || id,
    description: str(o.description, 1000),
    category: str(o.category, 100),
    images: list(o.images, (x) => safeURL(x) || null, 10),
    variants: list(o.variants, variant, 100),
  };
}

/** products reads render_products' structuredContent: {products: [Product]}. */
export function products(sc: unknown): Product[] {
  return list(obj(sc).products, product, 20);
}

export interface Address {
  name: string;
  line_one: string;
  line_two: string;
  city: string;
  state: string;
  country: string;
  postal_code: string;
  phone_number: string;
}

export const addressFields = ["name", "line_one", "line_two", "city", "state", "postal_code", "country", "phone_number"] as const;
export type AddressField = (typeof addressFields)[number];

export function address(v: unknown): Address {
  const o = obj(v);
  const a = {} as Address;
  for (const f of addressFields) a[f] = str(o[f], 200);
  return a;
}

export interface LineItem {
  id: string;
  itemID: string;
  quantity: number;
  name: string;
  image: string;
  unitAmount: number;
  /** subtotal is the line without tax (after its discount); total with tax. */
  subtotal: number;
  total: number;
}

function lineItem(v: unknown): LineItem | null {
  const o = obj(v);
  const item = obj(o.item);
  const itemID = str(item.id, 64);
  if (!itemID) return null;
  return {
    id: str(o.id, 64) || itemID,
    itemID,
    quantity: Math.max(0, int(item.quantity)),
    name: str(o.name, 300) || itemID,
    image: list(o.images, (x) => safeURL(x) || null, 1)[0] ?? "",
    unitAmount: int(o.unit_amount),
    subtotal: int(o.subtotal),
    total: int(o.total),
  };
}

export interface FulfillmentOption {
  id: string;
  title: string;
  subtitle: string;
  carrier: string;
  earliest: string;
  latest: string;
  subtotal: number;
  total: number;
}

function option(v: unknown): FulfillmentOption | null {
  const o = obj(v);
  const id = str(o.id, 64);
  if (!id) return null;
  return {
    id,
    title: str(o.title, 200) || id,
    subtitle: str(o.subtitle, 300),
    carrier: str(o.carrier, 100),
    earliest: str(o.earliest_delivery_time, 40),
    latest: str(o.latest_delivery_time, 40),
    subtotal: int(o.subtotal),
    total: int(o.total),
  };
}

export interface Total {
  type: string;
  text: string;
  amount: number;
}

/**
 * Message is a session message. The widget shows a buyer its own catalogs'
 * sentence for key (or code and param), with params filled in; content is
 * the shop's text for the model, never shown.
 */
export interface Message {
  type: string;
  code: string;
  param: string;
  content: string;
  /** key is the message's stable fine-grained id ("promo.unknown"). */
  key: string;
  params: Record<string, string>;
}

/** params reads a message's {name: string} values, bounded. */
export function params(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(obj(v)).slice(0, 10)) {
    if (typeof x === "string" || typeof x === "number") out[k.slice(0, 40)] = String(x).slice(0, 200);
  }
  return out;
}

/**
 * Display says how the session's figures are shown: with tax included
 * (lines, options and totals with tax; the tax as "incl." information) or
 * not (without tax; the tax its own line).
 */
export interface Display {
  taxIncluded: boolean;
  /** taxName is vat, gst, consumption_tax or sales_tax. */
  taxName: string;
}

function display(v: unknown): Display {
  const o = obj(v);
  const name = str(o.tax_name, 20);
  return { taxIncluded: o.prices_include_tax === true, taxName: ["vat", "gst", "consumption_tax", "sales_tax"].includes(name) ? name : "" };
}

/** Refund is money given back on an order. */
export interface Refund {
  amount: number;
  at: string;
}

export interface Link {
  type: string;
  url: string;
}

export interface Order {
  id: string;
  number: number;
  status: string;
  permalink: string;
  email: string;
  createdAt: string;
  currency: string;
  lines: LineItem[];
  totals: Total[];
  address: Address | null;
  option: FulfillmentOption | null;
  /** returns are the buyer's returns of the order (request_return), oldest first. */
  returns: OrderReturn[];
  display: Display;
  refunds: Refund[];
}

/** OrderReturn is an entry of a receipt's returns[]. */
export interface OrderReturn {
  id: string;
  status: string;
  refundAmount: number;
  createdAt: string;
}

function orderReturn(v: unknown): OrderReturn | null {
  const o = obj(v);
  const id = str(o.id, 64);
  return id ? { id, status: str(o.status, 40), refundAmount: int(o.refund_amount), createdAt: str(o.created_at, 40) } : null;
}

export interface Session {
  id: string;
  status: string;
  currency: string;
  paymentMode: string;
  email: string;
  address: Address | null;
  lines: LineItem[];
  options: FulfillmentOption[];
  optionID: string;
  totals: Total[];
  messages: Message[];
  links: Link[];
  order: Order | null;
  /** external: the merchant asks for external checkout (create_payment_link) even with a payment sheet. */
  external: boolean;
  /** sheet: the merchant lets buyers pay on the host's payment sheet (payment_sheet); else the payment page. */
  sheet: boolean;
  /** saved are a linked buyer's saved cards (payment_provider.managed_payment_methods), newest first. */
  saved: SavedMethod[];
  display: Display;
  /** countries are the policy's shipping countries (ISO 3166-1 alpha-2). */
  countries: string[];
  /** saveAddress is a linked buyer's choice to keep the address in their account; null for a guest. */
  saveAddress: boolean | null;
  /** raw is the session as received, handed unchanged to requestCheckout. */
  raw: Obj;
}

/** SavedMethod is a card the buyer saved with the merchant; complete_checkout pays with its id. */
export interface SavedMethod {
  id: string;
  name: string;
  last4: string;
  brand: string;
}

function savedMethod(v: unknown): SavedMethod | null {
  const o = obj(v);
  const id = str(o.id, 255);
  if (!id || str(o.type, 20) !== "card") return null;
  const last4 = str(o.display_last4, 4);
  return { id, name: str(o.display_name, 120) || last4, last4, brand: str(o.display_brand, 40) };
}

function total(v: unknown): Total | null {
  const o = obj(v);
  const type = str(o.type, 40);
  return type ? { type, text: str(o.display_text, 200) || type, amount: int(o.amount) } : null;
}

function message(v: unknown): Message | null {
  const o = obj(v);
  const content = str(o.content, 1000);
  const code = str(o.code, 40);
  const key = str(o.key, 80);
  if (!content && !code && !key) return null;
  return { type: str(o.type, 10), code, param: str(o.param, 200), content, key, params: params(o.params) };
}

function link(v: unknown): Link | null {
  const o = obj(v);
  const url = safeURL(o.url);
  return url ? { type: str(o.type, 40), url } : null;
}

/** refunds reads an order's refunds (refunds[].amount) or its returns' (returns[].refund_amount, once refunded). */
function refunds(receipt: Obj): Refund[] {
  const out = list(receipt.refunds, (x) => {
    const r = obj(x);
    const amount = int(r.amount) || int(obj(r.amount).amount);
    return amount > 0 ? { amount, at: str(r.created_at, 40) } : null;
  }, 20);
  if (out.length) return out;
  return list(receipt.returns, (x) => {
    const r = obj(x);
    const amount = int(r.refund_amount) || int(obj(r.refund_amount).amount);
    return amount > 0 && str(r.status, 20) === "refunded" ? { amount, at: str(r.refunded_at, 40) } : null;
  }, 20);
}

/** order reads an Order ({id, number, receipt, …}) or a bare Receipt. */
export function order(v: unknown): Order | null {
  const o = obj(v);
  const receipt = "receipt" in o ? obj(o.receipt) : o;
  const id = str(o.id, 64) || str(receipt.order_id, 64);
  const number = int(o.number) || int(receipt.number);
  if (!id || !number) return null;
  const addr = obj(receipt.fulfillment_address);
  return {
    id,
    number,
    status: str(o.status, 40) || str(receipt.status, 40),
    permalink: safeURL(o.permalink_url),
    email: str(receipt.email, 254),
    createdAt: str(receipt.created_at, 40),
    currency: str(receipt.currency, 3),
    lines: list(receipt.line_items, lineItem),
    totals: list(receipt.totals, total, 20),
    address: Object.keys(addr).length ? address(addr) : null,
    option: option(receipt.fulfillment_option),
    returns: list(receipt.returns, orderReturn, 50),
    display: display(receipt.display ?? o.display),
    refunds: refunds(receipt),
  };
}

/** session reads a CheckoutSession; null when v is not one. */
export function session(v: unknown): Session | null {
  const o = obj(v);
  const id = str(o.id, 64);
  if (!id || !("line_items" in o)) return null;
  const addr = obj(o.fulfillment_address);
  return {
    id,
    status: str(o.status, 40),
    currency: str(o.currency, 3),
    paymentMode: str(o.payment_mode, 10),
    email: str(obj(o.buyer).email, 254),
    address: Object.keys(addr).length ? address(addr) : null,
    lines: list(o.line_items, lineItem),
    options: list(o.fulfillment_options, option, 20),
    optionID: str(o.fulfillment_option_id, 64),
    totals: list(o.totals, total, 20),
    messages: list(o.messages, message, 50),
    links: list(o.links, link, 10),
    order: o.order ? order(o.order) : null,
    external: o.external_checkout === true,
    sheet: o.payment_sheet === true,
    saved: list(obj(o.payment_provider).managed_payment_methods, savedMethod, 10),
    display: display(o.display),
    countries: list(o.shipping_countries, (x) => (/^[A-Z]{2}$/.test(str(x, 2)) && str(x).length === 2 ? str(x) : null), 250),
    saveAddress: typeof o.save_address === "boolean" ? o.save_address : null,
    raw: o,
  };
}

export interface PaymentLink {
  url: string;
  /** expires is when the link stops working (ms since the epoch; 0 if unknown). */
  expires: number;
  provider: string;
}

/** paymentLink reads create_payment_link's structuredContent: {url, expires_at, provider}. */
export function paymentLink(v: unknown): PaymentLink | null {
  const o = obj(v);
  const url = safeURL(o.url);
  const t = Date.parse(str(o.expires_at, 40));
  return url ? { url, expires: Number.isNaN(t) ? 0 : t, provider: str(o.provider, 20) } : null;
}

/**
 * checkoutOutcome reads what requestCheckout resolved with, since hosts
 * differ (CONTRACT.md §3): a raw tool result (structuredContent.order), a
 * completed session (order), or a bare order. It answers the order when
 * there is one, else the session when there is one (a declined payment).
 */
export function checkoutOutcome(v: unknown): { order: Order | null; session: Session | null; error: string } {
  const o = obj(v);
  if (o.isError === true) {
    const text = list(o.content, (c) => str(obj(c).text) || null, 5).join(" ");
    const sc = obj(o.structuredContent);
    return { order: null, session: null, error: text || str(obj(sc.error).message) || "The payment could not be completed." };
  }
  for (const candidate of [o.structuredContent, o]) {
    const s = session(candidate);
    if (s) return { order: s.order, session: s, error: "" };
    const c = obj(candidate);
    if (c.order) {
      const ord = order(c.order);
      if (ord) return { order: ord, session: null, error: "" };
    }
  }
  return { order: order(o), session: null, error: "" };
}
