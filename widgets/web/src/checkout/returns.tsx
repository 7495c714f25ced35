// The returns section of the checkout widget's receipt: each return the
// buyer started (request_return), its status and refund, in the buyer's
// language. The words are the receipt page's (receipt_returns, …).

import type { OrderReturn } from "../lib/data";
import { money } from "../lib/format";
import { t, type Key } from "../lib/i18n";
import type { Fmt } from "./parts";

function day(iso: string, locale: string): string {
  const d = new Date(iso);
  return isNaN(d.getTime()) ? "" : new Intl.DateTimeFormat(locale, { dateStyle: "long" }).format(d);
}

export function Returns({ returns, fmt }: { returns: OrderReturn[]; fmt: Fmt }) {
  if (!returns.length) return null;
  return (
    <section aria-labelledby="returns-title" data-view="returns">
      <h2 id="returns-title">{t("receipt_returns")}</h2>
      <ul>
        {returns.map((r) => {
          const key = ("return_status_" + r.status) as Key;
          const status = ["requested", "canceled", "rejected", "accepted", "refunded"].includes(r.status) ? t(key) : r.status;
          return (
            <li key={r.id}>
              {t("receipt_return", { id: r.id, date: day(r.createdAt, fmt.locale), status, amount: money(r.refundAmount, fmt.currency, fmt.locale) })}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
