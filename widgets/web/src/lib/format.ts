// Amounts and dates in the host's locale. Amounts arrive as integers in the
// currency's minor unit (CONTRACT.md §2); the currency's exponent (2 for usd,
// 0 for jpy, 3 for kwd) comes from Intl, which knows ISO 4217.

const formatters = new Map<string, Intl.NumberFormat>();

function currencyFormat(locale: string, currency: string): Intl.NumberFormat {
  const key = locale + "|" + currency;
  let f = formatters.get(key);
  if (!f) {
    try {
      f = new Intl.NumberFormat(locale, { style: "currency", currency: currency.toUpperCase() });
    } catch {
      f = new Intl.NumberFormat("en", { style: "currency", currency: "USD" });
    }
    formatters.set(key, f);
  }
  return f;
}

/** exponent is the number of minor-unit digits of currency (2 for usd). */
export function exponent(currency: string): number {
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency: currency.toUpperCase() }).resolvedOptions()
      .maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/** money formats an amount in minor units: money(1250, "usd", "en-US") is "$12.50". */
export function money(amount: number, currency: string, locale: string): string {
  if (!currency) return String(amount);
  const e = exponent(currency);
  return currencyFormat(locale, currency).format(amount / 10 ** e);
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
