// The sections of the checkout widget. Each takes plain data and callbacks;
// the state and the tool calls live in ../checkout.tsx.

import type { Address, AddressField, FulfillmentOption, LineItem, Link, Order, Total } from "../lib/data";
import { dateTime, deliveryWindow, discount, money } from "../lib/format";
import { Img, Status, Stepper } from "../lib/ui";

export interface Fmt {
  currency: string;
  locale: string;
}

function amount(t: Total, f: Fmt): string {
  return t.type === "discount" || t.type === "items_discount" ? discount(t.amount, f.currency, f.locale) : money(t.amount, f.currency, f.locale);
}

export function Lines({ lines, fmt, busy, onQuantity, onRemove }: {
  lines: LineItem[];
  fmt: Fmt;
  busy: boolean;
  onQuantity?(i: number, n: number): void;
  onRemove?(i: number): void;
}) {
  return (
    <ul class="lines" aria-label="Items">
      {lines.map((l, i) => (
        <li class="line" key={l.id} data-item={l.itemID}>
          <Img src={l.image} alt="" />
          <div class="stack" style={{ gap: "4px" }}>
            <div class="row">
              <span>{l.name}</span>
              <span class="price">{money(l.total, fmt.currency, fmt.locale)}</span>
            </div>
            {onQuantity ? (
              <div class="row">
                <Stepper label={"Quantity of " + l.name} value={l.quantity} disabled={busy} onChange={(n) => onQuantity(i, n)} />
                {onRemove && lines.length > 1 && (
                  <button type="button" class="linkbtn" disabled={busy} aria-label={"Remove " + l.name} onClick={() => onRemove(i)}>
                    Remove
                  </button>
                )}
              </div>
            ) : (
              <span class="muted">
                {l.quantity} × {money(l.unitAmount, fmt.currency, fmt.locale)}
              </span>
            )}
          </div>
        </li>
      ))}
    </ul>
  );
}

export interface Form extends Address {
  email: string;
}

const fields: { key: AddressField | "email"; label: string; auto: string; type?: "email" | "tel"; full?: boolean; optional?: boolean }[] = [
  { key: "name", label: "Full name", auto: "shipping name", full: true },
  { key: "email", label: "Email (for the receipt)", auto: "email", type: "email", full: true },
  { key: "line_one", label: "Street address", auto: "shipping address-line1", full: true },
  { key: "line_two", label: "Apartment, suite (optional)", auto: "shipping address-line2", full: true, optional: true },
  { key: "city", label: "City", auto: "shipping address-level2" },
  { key: "state", label: "State / region", auto: "shipping address-level1" },
  { key: "postal_code", label: "Postal code", auto: "shipping postal-code" },
  { key: "country", label: "Country (2 letters, e.g. US)", auto: "shipping country" },
  { key: "phone_number", label: "Phone (optional)", auto: "shipping tel", type: "tel", optional: true },
];

/** fieldParam is the JSONPath a session message names a form field by. */
export function fieldParam(key: string): string {
  return key === "email" ? "$.buyer.email" : "$.fulfillment_address." + key;
}

export function AddressForm({ form, errors, busy, onInput, onSubmit }: {
  form: Form;
  errors: Record<string, string>;
  busy: boolean;
  onInput(key: keyof Form, value: string): void;
  onSubmit(): void;
}) {
  return (
    <form
      class="form"
      aria-label="Shipping address"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      {fields.map((f) => {
        const id = "addr-" + f.key;
        const err = errors[fieldParam(f.key)];
        return (
          <div class={f.full ? "full" : ""} key={f.key}>
            <label for={id}>{f.label}</label>
            <input
              id={id}
              name={f.key}
              type={(f.type ?? "text") as "text"}
              autoComplete={f.auto}
              maxLength={f.key === "country" ? 2 : 200}
              value={form[f.key]}
              aria-invalid={err ? "true" : undefined}
              aria-describedby={err ? id + "-error" : undefined}
              onInput={(e) => onInput(f.key, (e.target as HTMLInputElement).value)}
              onKeyDown={(e) => {
                if (e.key === "Enter") {
                  e.preventDefault();
                  onSubmit();
                }
              }}
            />
            {err && (
              <p class="field-error" id={id + "-error"}>
                {err}
              </p>
            )}
          </div>
        );
      })}
      <div class="full">
        <button type="button" id="save-address" class="btn" disabled={busy} onClick={onSubmit}>
          {busy ? "Saving…" : "Save address"}
        </button>
      </div>
    </form>
  );
}

export function Shipping({ options, chosen, fmt, busy, onChoose }: {
  options: FulfillmentOption[];
  chosen: string;
  fmt: Fmt;
  busy: boolean;
  onChoose(id: string): void;
}) {
  if (options.length === 0) return <p class="muted">Shipping options appear once the address is complete.</p>;
  return (
    <fieldset class="options" disabled={busy}>
      <legend>Shipping</legend>
      {options.map((o) => {
        const when = deliveryWindow(o.earliest, o.latest, fmt.locale);
        return (
          <label class="option" key={o.id} data-option={o.id}>
            <input type="radio" name="shipping" value={o.id} checked={o.id === chosen} onChange={() => onChoose(o.id)} />
            <span class="grow">
              <span class="row">
                <span>{o.title}</span>
                <span class="price">{money(o.total, fmt.currency, fmt.locale)}</span>
              </span>
              <span class="muted" style={{ display: "block" }}>
                {[o.carrier, o.subtitle].filter(Boolean).join(" · ")}
                {when && (o.carrier || o.subtitle ? " · " : "") + "Arrives " + when}
              </span>
            </span>
          </label>
        );
      })}
    </fieldset>
  );
}

export function Totals({ totals, fmt }: { totals: Total[]; fmt: Fmt }) {
  const shown = totals.filter((t) => t.amount !== 0 || t.type === "total" || t.type === "subtotal");
  return (
    <dl class="totals" aria-label="Totals">
      {shown.map((t) => (
        <div style={{ display: "contents" }} key={t.type}>
          <dt class={t.type === "total" ? "grand" : ""}>{t.text}</dt>
          <dd class={t.type === "total" ? "grand" : ""} data-total={t.type}>
            {amount(t, fmt)}
          </dd>
        </div>
      ))}
    </dl>
  );
}

const linkNames: Record<string, string> = {
  terms_of_use: "Terms of use",
  privacy_policy: "Privacy policy",
  return_policy: "Returns",
  support: "Support",
};

export function Links({ links, onOpen }: { links: Link[]; onOpen(url: string): void }) {
  // support_url repeats support under ChatGPT's name for it: one link.
  const shown = links.filter((l) => l.type !== "support_url" || !links.some((s) => s.type === "support" && s.url === l.url));
  if (shown.length === 0) return null;
  return (
    <nav class="links" aria-label="Legal and support">
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
          {linkNames[l.type] ?? l.type.replace(/_/g, " ")}
        </a>
      ))}
    </nav>
  );
}

export function Receipt({ order, fmt, onOpen }: { order: Order; fmt: Fmt; onOpen(url: string): void }) {
  const f = { currency: order.currency || fmt.currency, locale: fmt.locale };
  const a = order.address;
  return (
    <main class="stack" aria-labelledby="receipt-title" data-view="receipt">
      <div>
        <h1 id="receipt-title">Order #{order.number} is confirmed</h1>
        <p class="muted">
          {[order.createdAt && dateTime(order.createdAt, fmt.locale), order.email && "Receipt for " + order.email].filter(Boolean).join(" · ")}
        </p>
      </div>
      <Lines lines={order.lines} fmt={f} busy />
      {order.option && (
        <p>
          {order.option.title}
          {order.option.earliest && " · Arrives " + deliveryWindow(order.option.earliest, order.option.latest, fmt.locale)}
        </p>
      )}
      {a && (
        <address class="muted" style={{ fontStyle: "normal" }}>
          {[a.name, a.line_one, a.line_two, [a.postal_code, a.city, a.state].filter(Boolean).join(" "), a.country].filter(Boolean).join(", ")}
        </address>
      )}
      <Totals totals={order.totals} fmt={f} />
      {order.permalink && (
        <button type="button" class="btn" onClick={() => onOpen(order.permalink)}>
          View the receipt
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
      <h1>Checkout</h1>
      <div class="notice stack" id="pay-waiting" role="status" style={{ gap: "8px" }}>
        <p>
          {stopped
            ? "We stopped checking after 10 minutes. If you have paid, check again."
            : opened
              ? "Finish paying in the page that opened. Your receipt shows here once the payment is done."
              : "Open this link to pay (or copy it into your browser). Your receipt shows here once the payment is done."}
          {total && " Total: " + total + "."}
        </p>
        {!opened && (
          <a id="pay-url" href={url} target="_blank" rel="noopener noreferrer">
            {url}
          </a>
        )}
        <button type="button" id="pay-check" class="btn primary wide" disabled={checking} onClick={onCheck}>
          {checking ? "Checking…" : "I've paid — check now"}
        </button>
        <div class="row">
          <button type="button" id="pay-reopen" class="linkbtn" onClick={onReopen}>
            Open the payment page again
          </button>
          <button type="button" id="pay-back" class="btn" onClick={onBack}>
            Back to cart
          </button>
        </div>
      </div>
      <Status text={problem} error={!!problem} />
    </main>
  );
}
