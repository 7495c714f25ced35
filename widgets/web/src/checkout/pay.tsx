// Pay and what follows it: the road the merchant's policy chooses (the
// shop's payment page by default; the host's payment sheet where the
// session says payment_sheet, with the page as its fallback), and the
// states a payment passes through. None of them lies: a buyer closing the
// sheet is told nothing was charged, a sheet that failed is checked with
// the shop before the page is offered, and an unknown outcome is "Checking
// your payment…" until the shop knows (see Confirming).

import { useState } from "preact/hooks";
import { checkoutOutcome, session as readSession, type Message, type Order, type Session } from "../lib/data";
import { money } from "../lib/format";
import { toolError, type Host } from "../lib/host";
import { t } from "../lib/i18n";
import { say } from "../lib/says";

/**
 * closedByBuyer tells a sheet the buyer closed from one that failed. Hosts
 * reject requestCheckout when the buyer dismisses the sheet; the error's
 * name (AbortError) or code, or its message, says so.
 */
export function closedByBuyer(e: unknown): boolean {
  const o = (e ?? {}) as { name?: unknown; code?: unknown; message?: unknown };
  if (o.name === "AbortError") return true;
  const words = [o.code, o.message, typeof e === "string" ? e : ""].filter((x): x is string => typeof x === "string").join(" ");
  return /\b(cancel(l)?ed|cancel(l)?ation|closed|dismissed|user_cancel(l)?ed|aborted)\b/i.test(words);
}

type Note = { kind: "cancelled" | "failed" | "error"; text: string };

export function Pay({ host, s, busy, other, reason, onStart, onPaid, onSession, onExternal, onUnknown }: {
  host: Host;
  s: Session;
  busy: boolean;
  other: Message[];
  /** reason says why a payment that was being confirmed did not go through. */
  reason: string;
  onStart(): void;
  onPaid(o: Order): Promise<void>;
  onSession(s: Session): void;
  onExternal(): Promise<void>;
  onUnknown(): void;
}) {
  const [paying, setPaying] = useState(false);
  const [note, setNote] = useState<Note | null>(null);
  // chosen is the saved card the buyer pays with ("" for the sheet or the page); the newest by default.
  const [chosen, setChosen] = useState<string | null>(null);
  const card = chosen ?? s.saved[0]?.id ?? "";
  const savedCard = s.saved.find((c) => c.id === card);
  const ready = s.status === "ready_for_payment";
  const total = s.totals.find((x) => x.type === "total");
  const sheet = s.sheet && !s.external ? host.requestCheckout : undefined;
  const declined = other.filter((m) => m.code === "payment_declined" || m.code === "requires_3ds");
  const problems = s.messages.filter((m) => m.type === "error").length;

  async function viaPage() {
    onStart();
    setPaying(true);
    setNote(null);
    try {
      await onExternal();
    } catch (e) {
      const err = toolError(e);
      setNote({ kind: "error", text: t("pageFailed", { why: err.code ? say(err) : err.message }) });
    } finally {
      setPaying(false);
    }
  }

  /** failed asks the shop what became of the session before offering the page: a sheet that failed may have charged. */
  async function failed(why: string) {
    let now: Session | null = null;
    try {
      now = readSession(await host.call("get_checkout_session", { checkout_session_id: s.id }));
    } catch {
      /* the shop cannot say: offer the page, which charges a session once */
    }
    if (now) {
      onSession(now);
      if (now.order) return void (await onPaid(now.order));
      if (now.status === "in_progress") return onUnknown();
    }
    setNote({ kind: "failed", text: t("sheetFailed", { why: why.replace(/[.。]\s*$/, "") }) });
  }

  /** withSaved pays with the chosen saved card: complete_checkout with its id, charged by the shop; no sheet, no page. */
  async function withSaved(id: string) {
    onStart();
    setPaying(true);
    setNote(null);
    try {
      const out = checkoutOutcome(
        await host.call("complete_checkout", { checkout_session_id: s.id, payment_data: { token: id, provider: "stripe" } }),
      );
      if (out.order) return await onPaid(out.order);
      if (out.session) onSession(out.session);
      if (!out.session || out.session.status === "in_progress") return onUnknown();
      // The bank wants the buyer to confirm: the payment page can ask them.
      if (out.session.messages.some((m) => m.code === "requires_3ds")) setNote({ kind: "failed", text: t("savedNeedsAuth") });
    } catch (e) {
      const err = toolError(e);
      setNote({ kind: "error", text: err.code ? say(err) : err.message });
    } finally {
      setPaying(false);
    }
  }

  async function pay() {
    if (savedCard) return withSaved(savedCard.id);
    if (!sheet) return viaPage();
    onStart();
    setPaying(true);
    setNote(null);
    try {
      let res: unknown;
      try {
        res = await sheet(s.raw);
      } catch (e) {
        if (closedByBuyer(e)) return setNote({ kind: "cancelled", text: t("sheetCancelled") });
        return await failed(e instanceof Error ? e.message : String(e));
      }
      const out = checkoutOutcome(res);
      if (out.order) return await onPaid(out.order);
      if (out.session) onSession(out.session);
      if (out.error) return await failed(out.error);
      // Nothing readable, or a payment still being processed: the shop decides.
      if (!out.session || out.session.status === "in_progress") return onUnknown();
      if (out.session.status === "ready_for_payment" && !out.session.messages.some((m) => m.type === "error")) {
        setNote({ kind: "error", text: t("notCompleted") });
      }
    } finally {
      setPaying(false);
    }
  }

  // A failure that offers the page says why itself: the session's own
  // message would say it a second time.
  const alert = note?.kind === "error" ? note.text : note?.kind === "failed" ? undefined : declined[0] && say(declined[0]);
  const testMode = s.paymentMode === "test" ? t("testMode") + " " : "";
  // A linked buyer's saved cards (payment_provider.managed_payment_methods),
  // above Pay on either road: one chosen pays through complete_checkout
  // with its id; "a new card" keeps the sheet or the page.
  return (
    <section aria-label={t("payment")} class="stack" style={{ gap: "6px" }}>
      {ready && s.saved.length > 0 && (
        <fieldset id="saved-cards" class="stack" style={{ gap: "4px", border: 0, padding: 0, margin: 0 }}>
          <legend>{t("savedCards")}</legend>
          {s.saved.map((c) => (
            <label key={c.id}>
              <input type="radio" name="saved-card" value={c.id} checked={card === c.id} disabled={paying} onChange={() => setChosen(c.id)} /> {c.name}
            </label>
          ))}
          <label>
            <input type="radio" name="saved-card" value="" checked={card === ""} disabled={paying} onChange={() => setChosen("")} /> {t("newCard")}
          </label>
        </fieldset>
      )}
      {reason && !note && !alert && (
        <p class="notice" role="status" id="pay-reason">
          {reason}
        </p>
      )}
      {note?.kind === "cancelled" && (
        <p class="notice" role="status" id="pay-cancelled">
          {note.text}
        </p>
      )}
      {note?.kind === "failed" && (
        <div class="notice stack" role="status" id="pay-failed" style={{ gap: "6px" }}>
          <p>{note.text}</p>
          <button type="button" id="pay-page" class="btn primary wide" disabled={paying} onClick={() => void viaPage()}>
            {t("payOnPage")}
          </button>
        </div>
      )}
      {alert && (
        <p class="notice error" role="alert" id="pay-error">
          {alert}
        </p>
      )}
      {note?.kind !== "failed" && (
        <button type="button" id="pay" class="btn primary wide" disabled={!ready || busy || paying} aria-describedby="pay-hint" onClick={() => void pay()}>
          {paying ? (sheet || savedCard ? t("paying") : t("openingPage")) : t("pay", { total: total ? money(total.amount, s.currency, host.locale) : "" }).trim()}
        </button>
      )}
      <p class="muted" id="pay-hint">
        {ready
          ? note?.kind === "failed"
            ? testMode + t("hintPage")
            : savedCard
            ? testMode + t("hintSaved", { card: savedCard.name })
            : sheet
            ? s.paymentMode === "test"
              ? t("testMode")
              : t("hintSheet")
            : testMode + t("hintPage")
          : problems
            ? t("hintFix", { n: problems })
            : t("hintNotReady")}
      </p>
    </section>
  );
}

/** Confirming is the one state of a payment whose outcome the shop does not know yet. */
export function Confirming({ stopped, checking, problem, onCheck }: { stopped: boolean; checking: boolean; problem: string; onCheck(): void }) {
  return (
    <main class="stack" data-view="confirming">
      <h1>{t("checkout")}</h1>
      <div class="notice stack" id="pay-confirming" role="status" aria-live="polite" style={{ gap: "8px" }}>
        <p>
          <strong>{t("checking")}</strong>
        </p>
        <p>{stopped ? t("checkingStopped") : t("checkingHint")}</p>
        {stopped && (
          <button type="button" id="confirm-check" class="btn" disabled={checking} onClick={onCheck}>
            {checking ? t("checkingShort") : t("checkAgain")}
          </button>
        )}
      </div>
      {problem && (
        <p class="status" role="status">
          {problem}
        </p>
      )}
    </main>
  );
}
