// The buyer's sentence for a session message or a refusal, from the
// widget's catalogs in the buyer's language: by the message's key
// ("promo.unknown"), else by its code and the part of the checkout its
// param names ("invalid" at "$.promo_code"), else by its code alone. The
// shop's own text (content) is written for the model and never shown.

import type { Message } from "./data";
import { has, t, type Key } from "./i18n";

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

/**
 * say is m in the buyer's language, with its params (and vars, which fill
 * what the shop did not send) filled in. A message at one form field says
 * "Required." or "Check this entry." beside it.
 */
export function say(m: Said, vars: Record<string, string> = {}, atField = false): string {
  const values = { ...vars, ...(m.params ?? {}) };
  if (m.key && has(m.key)) return t(m.key as Key, values);
  if (atField) return t(m.code === "missing" ? "msg.required" : "msg.check");
  const bySection = `${m.code}@${section(m.param)}`;
  if (has(bySection)) return t(bySection as Key, values);
  const byCode = "code." + m.code;
  return t((has(byCode) ? byCode : "code.other") as Key, values);
}

/** known reports whether the catalogs have a sentence for m's key. */
export function known(m: Said): boolean {
  return !!m.key && has(m.key);
}
