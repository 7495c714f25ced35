// The buyer's sentence for a session message or a refusal, from the
// widget's catalogs in the buyer's language: by the message's key
// ("promo.unknown", docs/messages.md), else a sentence for its code. The
// shop's own text (content) is written for the model and never shown.
// Params are filled in as the buyer reads them: *_amount as money in the
// session's currency, *_date as a date, country codes as country names.

import type { Message } from "./data";
import { countryName, money } from "./format";
import { has, locale, t, type Key } from "./i18n";

/** Said is what say needs of a message or a refusal. */
export type Said = Pick<Message, "code" | "param"> & { key?: string; params?: Record<string, string> };

/** section names the part of the checkout a JSONPath param is about. */
export function section(param: string): "address" | "buyer" | "shipping" | "promo" | "items" | "pay" {
  if (param.startsWith("$.fulfillment_address")) return "address";
  if (param.startsWith("$.buyer")) return "buyer";
  if (param.startsWith("$.fulfillment_option")) return "shipping";
  if (param.startsWith("$.promo_code")) return "promo";
  if (param.startsWith("$.line_items") || param.startsWith("$.items")) return "items";
  return "pay";
}

let currency = "";

/** sayIn sets the currency *_amount params are in: the session's. */
export function sayIn(c: string): void {
  currency = c;
}

/** value is a param as the buyer reads it. */
function value(name: string, v: string): string {
  const loc = locale();
  if (name.endsWith("_amount") && /^-?\d+$/.test(v) && currency) return money(Number(v), currency, loc);
  if (name.endsWith("_date") && /^\d{4}-\d\d-\d\d$/.test(v)) {
    try {
      return new Intl.DateTimeFormat(loc, { dateStyle: "medium", timeZone: "UTC" }).format(new Date(v + "T00:00:00Z"));
    } catch {
      return v;
    }
  }
  if (name === "country" && /^[A-Z]{2}$/.test(v)) return countryName(v, loc);
  if (name === "countries") return v.split(",").map((c) => countryName(c.trim(), loc)).join(", ");
  if (name === "example") return v ? t("eg", { x: v }) : "";
  return v;
}

/** say is m in the buyer's language, with its params (and vars, which fill what the shop did not send) filled in. */
export function say(m: Said, vars: Record<string, string> = {}): string {
  const values: Record<string, string> = { example: "" };
  for (const [k, v] of Object.entries({ ...vars, ...(m.params ?? {}) })) values[k] = value(k, v);
  if (m.key && has(m.key)) return t(m.key as Key, values);
  const byCode = "code." + m.code;
  return t((has(byCode) ? byCode : "code.other") as Key, values);
}

/** known reports whether the catalogs have a sentence for m's key. */
export function known(m: Said): boolean {
  return !!m.key && has(m.key);
}
