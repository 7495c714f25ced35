// The sections of the checkout widget. Each takes plain data and callbacks;
// the state and the tool calls live in ../checkout.tsx.

import type { Display, FulfillmentOption, LineItem, Link, Order, Total } from "../lib/data";
import { addressLines, dateTime, day, deliveryWindow, discount, money } from "../lib/format";
import { t, type Key } from "../lib/i18n";
import { Img, Status, Stepper } from "../lib/ui";
import { Returns } from "./returns";

export interface Fmt {
  currency: string;
  locale: string;
  /** display says whether figures are shown with tax included. */
  display: Display;
}

/** linePrice is what a line shows: with tax where prices include it, else without. */
export function linePrice(l: LineItem, f: Fmt): number {
  return f.display.taxIncluded ? l.total : l.subtotal;
}

/** optionPrice is what a shipping option shows, by the same convention. */
export function optionPrice(o: FulfillmentOption, f: Fmt): number {
  return f.display.taxIncluded ? o.total : o.subtotal;
}

// named are the links the widget names in the buyer's language (the
// shop's own names are English); others show the shop's name.
const named = new Set<string>(["terms_of_use", "privacy_policy", "return_policy", "support"].map((k) => "link_" + k));

function label(key: string): string | undefined {
  return named.has(key) ? t(key as Key) : undefined;
}

export function Lines({ lines, fmt, busy, onQuantity, onRemove }: {
  lines: LineItem[];
  fmt: Fmt;
  busy: boolean;
  onQuantity?(i: number, n: number): void;
  onRemove?(i: number): void;
}) {
  return (
    <ul class="lines" aria-label={t("items")}>
      {lines.map((l, i) => (
        <li class="line" key={l.id} data-item={l.itemID}>
          <Img src={l.image} alt="" />
          <div class="stack" style={{ gap: "4px" }}>
            <div class="row">
              <span>{l.name}</span>
              <span class="price">{money(linePrice(l, fmt), fmt.currency, fmt.locale)}</span>
            </div>
            {onQuantity ? (
              <div class="row">
                <Stepper label={t("quantityOf", { name: l.name })} value={l.quantity} disabled={busy} onChange={(n) => onQuantity(i, n)} />
                {onRemove && lines.length > 1 && (
                  <button type="button" class="linkbtn" disabled={busy} aria-label={t("removeLabel", { name: l.name })} onClick={() => onRemove(i)}>
                    {t("remove")}
                  </button>
                )}
              </div>
            ) : (
              l.quantity > 1 &&
              linePrice(l, fmt) % l.quantity === 0 && (
                <span class="muted">{t("qtyEach", { qty: l.quantity, amount: money(linePrice(l, fmt) / l.quantity, fmt.currency, fmt.locale) })}</span>
              )
            )}
          </div>
        </li>
      ))}
    </ul>
  );
}

export function Shipping({ options, chosen, fmt, busy, onChoose }: {
  options: FulfillmentOption[];
  chosen: string;
  fmt: Fmt;
  busy: boolean;
  onChoose(id: string): void;
}) {
  if (options.length === 0) return <p class="muted">{t("shippingLater")}</p>;
  return (
    <fieldset class="options" disabled={busy}>
      <legend>{t("shipping")}</legend>
      {options.map((o) => {
        // The estimate comes from the delivery dates, in the buyer's
        // language; the merchant's subtitle ("3–5 business days") is not.
        const when = deliveryWindow(o.earliest, o.latest, fmt.locale);
        return (
          <label class="option" key={o.id} data-option={o.id}>
            <input type="radio" name="shipping" value={o.id} checked={o.id === chosen} onChange={() => onChoose(o.id)} />
            <span class="grow">
              <span class="row">
                <span>{o.title}</span>
                <span class="price">{money(optionPrice(o, fmt), fmt.currency, fmt.locale)}</span>
              </span>
              <span class="muted" style={{ display: "block" }}>
                {[o.carrier, when && t("arrives", { when })].filter(Boolean).join(" · ")}
              </span>
            </span>
          </label>
        );
      })}
    </fieldset>
  );
}

/** Row is one figure of the totals: its key, label and signed amount. */
interface Row {
  type: string;
  label: string;
  amount: number;
  minus?: boolean;
}

/**
 * rows are the figures the totals show, so that they add up as shown:
 * items (the lines as shown), shipping (the chosen option as shown), the
 * order's discount, then the tax as its own line, or, where prices include
 * it, as information under the total.
 */
function rows(totals: Total[], lines: LineItem[], option: FulfillmentOption | undefined, f: Fmt): { rows: Row[]; tax: number } {
  const get = (type: string) => totals.find((x) => x.type === type)?.amount ?? 0;
  const has = (type: string) => totals.some((x) => x.type === type);
  const items = lines.length ? lines.reduce((n, l) => n + linePrice(l, f), 0) : get("subtotal");
  const shipping = option ? optionPrice(option, f) : get("fulfillment");
  const out: Row[] = [{ type: "items", label: t("total_items"), amount: items }];
  if (has("fulfillment") && (option || get("fulfillment") !== 0)) out.push({ type: "fulfillment", label: t("total_fulfillment"), amount: shipping });
  if (get("discount") !== 0) out.push({ type: "discount", label: t("total_discount"), amount: get("discount"), minus: true });
  if (!f.display.taxIncluded && get("tax") !== 0) out.push({ type: "tax", label: taxLabel(f.display), amount: get("tax") });
  out.push({ type: "total", label: t("total_total"), amount: get("total") });
  return { rows: out, tax: get("tax") };
}

function taxLabel(d: Display): string {
  return d.taxName ? t(("taxWord_" + d.taxName) as Key).replace(/^\p{Ll}/u, (c) => c.toLocaleUpperCase()) : t("total_tax");
}

export function Totals({ totals, lines, option, fmt }: { totals: Total[]; lines: LineItem[]; option?: FulfillmentOption; fmt: Fmt }) {
  const { rows: shown, tax } = rows(totals, lines, option, fmt);
  const m = (n: number) => money(n, fmt.currency, fmt.locale);
  return (
    <dl class="totals" aria-label={t("totals")}>
      {shown.map((x) => (
        <div style={{ display: "contents" }} key={x.type}>
          <dt class={x.type === "total" ? "grand" : ""}>{x.label}</dt>
          <dd class={x.type === "total" ? "grand" : ""} data-total={x.type}>
            {x.minus ? discount(x.amount, fmt.currency, fmt.locale) : m(x.amount)}
          </dd>
        </div>
      ))}
      {fmt.display.taxIncluded && tax > 0 && (
        <dd class="muted incl" data-total="tax-included">
          {t("inclTax", { tax: t(("taxWord_" + (fmt.display.taxName || "vat")) as Key), amount: m(tax) })}
        </dd>
      )}
    </dl>
  );
}

export function Links({ links, onOpen }: { links: Link[]; onOpen(url: string): void }) {
  // support_url repeats support under ChatGPT's name for it: one link.
  const shown = links.filter((l) => l.type !== "support_url" || !links.some((s) => s.type === "support" && s.url === l.url));
  if (shown.length === 0) return null;
  return (
    <nav class="links" aria-label={t("legal")}>
      {shown.map((l) => (
        <a
          key={l.type + l.url}
          href={l.url}
          target="_blank"
          rel="noopener noreferrer"
          class="linkbtn"
          data-link={l.type}
          onClick={(e) => {
            e.preventDefault();
            onOpen(l.url);
          }}
        >
          {label("link_" + l.type) ?? l.type.replace(/_/g, " ")}
        </a>
      ))}
    </nav>
  );
}

export function Receipt({ order, fmt, onOpen }: { order: Order; fmt: Fmt; onOpen(url: string): void }) {
  const f = { ...fmt, currency: order.currency || fmt.currency, display: order.display.taxName ? order.display : fmt.display };
  const a = order.address;
  const refunded = order.refunds.reduce((n, r) => n + r.amount, 0);
  return (
    <main class="stack" aria-labelledby="receipt-title" data-view="receipt">
      <div>
        <h1 id="receipt-title">{t("confirmed", { n: order.number })}</h1>
        <p class="muted">
          {[order.createdAt && dateTime(order.createdAt, fmt.locale), order.email && t("receiptFor", { email: order.email })].filter(Boolean).join(" · ")}
        </p>
      </div>
      <Lines lines={order.lines} fmt={f} busy />
      {order.option && (
        <p>
          {order.option.title}
          {order.option.earliest && " · " + t("arrives", { when: deliveryWindow(order.option.earliest, order.option.latest, fmt.locale) })}
        </p>
      )}
      {a && (
        <address class="muted" style={{ fontStyle: "normal" }} id="receipt-address">
          {[a.name, ...addressLines(a, fmt.locale)].filter(Boolean).map((x) => (
            <div key={x}>{x}</div>
          ))}
        </address>
      )}
      <Totals totals={order.totals} lines={order.lines} option={order.option ?? undefined} fmt={f} />
      {refunded > 0 && (
        <ul class="notes" id="refunds">
          {order.refunds.map((r, i) => (
            <li key={i}>
              {t("refunded", { amount: money(r.amount, f.currency, f.locale) })}
              {r.at && " · " + day(r.at, fmt.locale)}
            </li>
          ))}
          {order.refunds.length > 1 && <li>{t("refundedTotal", { amount: money(refunded, f.currency, f.locale) })}</li>}
        </ul>
      )}
      <Returns returns={order.returns} fmt={f} />
      {order.permalink && (
        <button type="button" class="btn" onClick={() => onOpen(order.permalink)}>
          {t("viewReceipt")}
        </button>
      )}
    </main>
  );
}

/** PayWaiting is the view while the buyer pays on the shop's payment page. */
export function PayWaiting({ url, opened, stopped, checking, problem, total, onCheck, onReopen, onBack }: {
  url: string;
  opened: boolean;
  stopped: boolean;
  checking: boolean;
  problem: string;
  total: string;
  onCheck(): void;
  onReopen(): void;
  onBack(): void;
}) {
  return (
    <main class="stack" data-view="waiting">
      <h1>{t("checkout")}</h1>
      <div class="notice stack" id="pay-waiting" role="status" style={{ gap: "8px" }}>
        <p>
          {stopped ? t("waitStopped") : opened ? t("waitOpened") : t("waitLink")}
          {total && " " + t("waitTotal", { total })}
        </p>
        {!opened && (
          <a id="pay-url" href={url} target="_blank" rel="noopener noreferrer">
            {url}
          </a>
        )}
        <button type="button" id="pay-check" class="btn primary wide" disabled={checking} onClick={onCheck}>
          {checking ? t("checkingShort") : t("paidCheck")}
        </button>
        <div class="row">
          <button type="button" id="pay-reopen" class="linkbtn" onClick={onReopen}>
            {t("reopen")}
          </button>
          <button type="button" id="pay-back" class="btn" onClick={onBack}>
            {t("back")}
          </button>
        </div>
      </div>
      <Status text={problem} error={!!problem} />
    </main>
  );
}
