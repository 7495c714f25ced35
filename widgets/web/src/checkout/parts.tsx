// The sections of the checkout widget. Each takes plain data and callbacks;
// the state and the tool calls live in ../checkout.tsx.

import type { Address, AddressField, FulfillmentOption, LineItem, Link, Order, Total } from "../lib/data";
import { dateTime, deliveryWindow, discount, money } from "../lib/format";
import { t, type Key } from "../lib/i18n";
import { Img, Status, Stepper } from "../lib/ui";
import { Returns } from "./returns";

export interface Fmt {
  currency: string;
  locale: string;
}

function amount(x: Total, f: Fmt): string {
  return x.type === "discount" || x.type === "items_discount" ? discount(x.amount, f.currency, f.locale) : money(x.amount, f.currency, f.locale);
}

// named are the totals and links the widget names in the buyer's language
// (the shop's own display_text is English); others show the shop's name.
const named = new Set<string>([
  ...["items_base_amount", "items_discount", "subtotal", "discount", "fulfillment", "tax", "total"].map((k) => "total_" + k),
  ...["terms_of_use", "privacy_policy", "return_policy", "support"].map((k) => "link_" + k),
]);

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
              <span class="price">{money(l.total, fmt.currency, fmt.locale)}</span>
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

const fields: { key: AddressField | "email"; label: Key; auto: string; type?: "email" | "tel"; full?: boolean; optional?: boolean }[] = [
  { key: "name", label: "fieldName", auto: "shipping name", full: true },
  { key: "email", label: "fieldEmail", auto: "email", type: "email", full: true },
  { key: "line_one", label: "fieldLineOne", auto: "shipping address-line1", full: true },
  { key: "line_two", label: "fieldLineTwo", auto: "shipping address-line2", full: true, optional: true },
  { key: "city", label: "fieldCity", auto: "shipping address-level2" },
  { key: "state", label: "fieldState", auto: "shipping address-level1" },
  { key: "postal_code", label: "fieldPostal", auto: "shipping postal-code" },
  { key: "country", label: "fieldCountry", auto: "shipping country" },
  { key: "phone_number", label: "fieldPhone", auto: "shipping tel", type: "tel", optional: true },
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
      aria-label={t("shippingAddress")}
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
            <label for={id}>{t(f.label)}</label>
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
          {busy ? t("saving") : t("saveAddress")}
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
  if (options.length === 0) return <p class="muted">{t("shippingLater")}</p>;
  return (
    <fieldset class="options" disabled={busy}>
      <legend>{t("shipping")}</legend>
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
                {when && (o.carrier || o.subtitle ? " · " : "") + t("arrives", { when })}
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
    <dl class="totals" aria-label={t("totals")}>
      {shown.map((x) => (
        <div style={{ display: "contents" }} key={x.type}>
          <dt class={x.type === "total" ? "grand" : ""}>{label("total_" + x.type) ?? x.text}</dt>
          <dd class={x.type === "total" ? "grand" : ""} data-total={x.type}>
            {amount(x, fmt)}
          </dd>
        </div>
      ))}
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
  const f = { currency: order.currency || fmt.currency, locale: fmt.locale };
  const a = order.address;
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
        <address class="muted" style={{ fontStyle: "normal" }}>
          {[a.name, a.line_one, a.line_two, [a.postal_code, a.city, a.state].filter(Boolean).join(" "), a.country].filter(Boolean).join(", ")}
        </address>
      )}
      <Totals totals={order.totals} fmt={f} />
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
