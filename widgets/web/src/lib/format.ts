// Amounts and dates in the host's locale. Amounts arrive as integers in the
// currency's minor unit (CONTRACT.md §2), counted with the shop's ISO 4217
// exponents (money/money.go), not with Intl's: Intl takes its digits from
// CLDR, which says 0 for huf and idr where ISO 4217 (and so the shop) says 2.

/**
 * exponents is money/money.go's isoExponents: the ISO 4217 exponent of every
 * currency the shop supports. widgets/format_test.go fails when they differ.
 */
const exponents: Record<string, number> = {
  aed: 2, aud: 2, bhd: 3, brl: 2, cad: 2, chf: 2, clp: 0, cny: 2, czk: 2, dkk: 2,
  eur: 2, gbp: 2, hkd: 2, huf: 2, idr: 2, ils: 2, inr: 2, isk: 0, jod: 3, jpy: 0,
  krw: 0, kwd: 3, mxn: 2, myr: 2, nok: 2, nzd: 2, omr: 3, php: 2, pln: 2, ron: 2,
  rsd: 2, sar: 2, sek: 2, sgd: 2, thb: 2, tnd: 3, try: 2, twd: 2, usd: 2, vnd: 0,
  zar: 2,
};

/** defaultExponent is the exponent of a currency the table does not name. */
const defaultExponent = 2;

/** exponent is the number of minor-unit digits of currency (2 for usd, 0 for jpy, 3 for kwd). */
export function exponent(currency: string): number {
  const c = currency.toLowerCase();
  return Object.hasOwn(exponents, c) ? exponents[c] : defaultExponent;
}

const formatters = new Map<string, (major: number) => string>();

/** currencyFormat formats major units of currency with exactly its exponent's digits. */
function currencyFormat(locale: string, currency: string): (major: number) => string {
  const key = locale + "|" + currency;
  let f = formatters.get(key);
  if (!f) {
    const e = exponent(currency);
    const code = currency.toUpperCase();
    const digits = { minimumFractionDigits: e, maximumFractionDigits: e };
    const make = (loc: string) => new Intl.NumberFormat(loc, { style: "currency", currency: code, ...digits });
    let nf: Intl.NumberFormat | undefined;
    try {
      nf = make(locale);
    } catch {
      try {
        nf = make("en");
      } catch {
        /* not a currency code Intl takes */
      }
    }
    if (nf) {
      const n = nf;
      f = (x) => n.format(x);
    } else {
      const plain = new Intl.NumberFormat("en", digits);
      f = (x) => plain.format(x) + " " + code;
    }
    formatters.set(key, f);
  }
  return f;
}

/** money formats an amount in minor units: money(1250, "usd", "en-US") is "$12.50". */
export function money(amount: number, currency: string, locale: string): string {
  if (!currency) return String(amount);
  return currencyFormat(locale, currency)(amount / 10 ** exponent(currency));
}

/** negative formats a discount: "−$2.50" (or "$0.00" when there is none). */
export function discount(amount: number, currency: string, locale: string): string {
  return amount > 0 ? "−" + money(amount, currency, locale) : money(0, currency, locale);
}

function date(iso: string, locale: string, opts: Intl.DateTimeFormatOptions): string {
  const d = new Date(iso);
  if (!iso || Number.isNaN(d.getTime())) return "";
  try {
    return new Intl.DateTimeFormat(locale, opts).format(d);
  } catch {
    return d.toDateString();
  }
}

/** deliveryWindow is "Mar 3 – Mar 5" (or one date when both are the same day). */
export function deliveryWindow(earliest: string, latest: string, locale: string): string {
  const opts: Intl.DateTimeFormatOptions = { weekday: "short", month: "short", day: "numeric", timeZone: "UTC" };
  const a = date(earliest, locale, opts);
  const b = date(latest, locale, opts);
  if (!a) return b;
  if (!b || a === b) return a;
  try {
    return new Intl.DateTimeFormat(locale, opts).formatRange(new Date(earliest), new Date(latest));
  } catch {
    return a + " – " + b;
  }
}

/** dateTime formats a timestamp for a receipt. */
export function dateTime(iso: string, locale: string): string {
  return date(iso, locale, { dateStyle: "medium", timeStyle: "short" });
}

const regionNames = new Map<string, Intl.DisplayNames | null>();

/** countryName is country (ISO 3166-1 alpha-2) named in locale: "Deutschland" for DE in de-DE. */
export function countryName(country: string, locale: string): string {
  let names = regionNames.get(locale);
  if (names === undefined) {
    try {
      names = new Intl.DisplayNames([locale, "en"], { type: "region" });
    } catch {
      names = null;
    }
    regionNames.set(locale, names);
  }
  try {
    return names?.of(country) ?? country;
  } catch {
    return country;
  }
}

/** Postal is what addressLines needs of an address. */
interface Postal {
  name: string;
  line_one: string;
  line_two: string;
  city: string;
  state: string;
  postal_code: string;
  country: string;
}

// stateAfterCity are countries whose addresses end "City, ST 12345"; japan
// starts with the postal code and the prefecture; elsewhere "12345 City".
const stateAfterCity = new Set(["US", "CA", "AU"]);

/**
 * addressLines writes an address in its country's own order, without the
 * name: the street, then the town line and the country (named in locale).
 */
export function addressLines(a: Postal, locale: string): [string, string] {
  const street = [a.line_one, a.line_two].filter(Boolean).join(", ");
  const country = countryName(a.country, locale);
  let town: string;
  if (a.country === "JP") return [["〒" + a.postal_code, a.state, a.city, street].filter((x) => x && x !== "〒").join(" "), country];
  if (stateAfterCity.has(a.country)) town = [a.city, [a.state, a.postal_code].filter(Boolean).join(" ")].filter(Boolean).join(", ");
  else if (a.country === "GB") town = [a.city, a.postal_code].filter(Boolean).join(" ");
  else town = [[a.postal_code, a.city].filter(Boolean).join(" "), a.state].filter(Boolean).join(", ");
  return [street, [town, country].filter(Boolean).join(", ")];
}

/** day formats a timestamp as its date alone ("7 Dec 2026"). */
export function day(iso: string, locale: string): string {
  return date(iso, locale, { dateStyle: "medium" });
}
