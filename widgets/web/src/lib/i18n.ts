// The widgets' words in the buyer's language. Every string a widget shows
// comes from a message catalog (./messages), chosen from the host's locale
// (MCP Apps hostContext.locale, window.openai.locale, the lang the host set
// on the document), English when the shop has none for it. A catalog is a
// Messages: `npm run check` fails when one lacks a key or has a stray one.
// Plurals go through Intl.PluralRules; amounts and dates through ./format.

import { en, type Key, type Messages, type ProductsKey, type Text } from "./messages/en";
import { de } from "./messages/de";
import { es } from "./messages/es";
import { fr } from "./messages/fr";
import { ja } from "./messages/ja";
import { ptBR } from "./messages/pt-BR";

export type { Key, ProductsKey };

// extra are catalogs a widget adds for itself (the products widget's), by catalog name.
let extra: Record<string, Record<string, Text>> = {};

/** addCatalogs adds a widget's own messages, so only that widget bundles them. */
export function addCatalogs(c: Record<string, Record<string, Text>>): void {
  extra = c;
}

const catalogs: Record<string, Messages> = { en, es, fr, de, ja, "pt-BR": ptBR };

let lang = "en";
let tag = "en";
let messages: Messages = en;
let plurals = new Intl.PluralRules("en");

/** catalogFor names the catalog of a BCP 47 locale: its exact tag, else its language's, else en. */
export function catalogFor(locale: string): string {
  const tag = locale.trim().replace(/_/g, "-");
  const exact = Object.keys(catalogs).find((k) => k.toLowerCase() === tag.toLowerCase());
  if (exact) return exact;
  const base = tag.split("-")[0].toLowerCase();
  return Object.keys(catalogs).find((k) => k.split("-")[0].toLowerCase() === base) ?? "en";
}

/** setLocale chooses the catalog of the host's locale. */
export function setLocale(locale: string): void {
  tag = locale || "en";
  const name = catalogFor(tag);
  if (name === lang) return;
  lang = name;
  messages = catalogs[name];
  try {
    plurals = new Intl.PluralRules(name);
  } catch {
    plurals = new Intl.PluralRules("en");
  }
}

/** has reports whether key names a message of the catalogs. */
export function has(key: string): boolean {
  return Object.hasOwn(en, key);
}

/** locale is the host's locale as given (BCP 47), for Intl. */
export function locale(): string {
  return tag;
}

/** language is the catalog in use ("de", "pt-BR", …). */
export function language(): string {
  return lang;
}

/**
 * t is a message with its {placeholders} filled in; a plural message takes
 * the form Intl.PluralRules chooses for vars.n.
 */
export function t(key: Key | ProductsKey, vars: Record<string, string | number> = {}): string {
  const own = messages as Record<string, Text>;
  const text: Text = own[key] ?? extra[lang]?.[key] ?? (en as Record<string, Text>)[key] ?? extra.en?.[key] ?? key;
  let s: string;
  if (typeof text === "string") s = text;
  else {
    const n = typeof vars.n === "number" ? vars.n : 0;
    const form = plurals.select(n) as keyof typeof text;
    s = text[form] ?? text.other;
  }
  return s.replace(/\{(\w+)\}/g, (m, k: string) => (k in vars ? String(vars[k]) : m));
}
