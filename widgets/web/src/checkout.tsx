// The checkout widget (ui://shop/checkout-v1.html): render_checkout's
// session with its lines, address, shipping, promotion, totals and legal
// links, every change made through update_checkout_session. Pay takes the
// road the merchant's policy chooses (./checkout/pay.tsx): by default the
// shop's payment page (create_payment_link, ui/open-link), polling the
// session until the order lands, the buyer cancels, or ten minutes pass;
// where the session says payment_sheet, the host's payment sheet
// (window.openai.requestCheckout), whose order becomes the receipt. A
// payment whose outcome is unknown (the session in_progress) is checked
// with backing off until the shop knows it.
//
// A conversation revisited later re-mounts the widget with its old tool
// output (or none): on mount the widget reads the session again with
// get_checkout_session and shows what the shop says now (a completed one
// as its receipt, an ended one with a way to start again).

import "./lib/jitless";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { address, addressFields, obj, paymentLink, session as readSession, str, type Obj, type Order, type Session } from "./lib/data";
import { money } from "./lib/format";
import { Host, markReady, ToolError, toolError } from "./lib/host";
import { t } from "./lib/i18n";
import { Status } from "./lib/ui";
import { AddressForm, AddressText, countryOf, fieldParam, SaveToAccount, type Form } from "./checkout/address";
import { Lines, Links, PayWaiting, Receipt, Shipping, Totals } from "./checkout/parts";
import { known, say, sayIn, section } from "./lib/says";
import { Confirming, Pay } from "./checkout/pay";
import "./styles.css";

type Section = "lines" | "address" | "shipping" | "promo" | "pay";

/** Waiting is a payment on the shop's page that the widget watches for. */
interface Waiting {
  id: string;
  url: string;
  expires: number;
  /** opened: the host opened the page; else the widget shows the URL. */
  opened: boolean;
  /** since is when polling started; it stops POLL_FOR later. */
  since: number;
  stopped: boolean;
  checking: boolean;
  problem: string;
}

/** Confirm is a payment whose outcome the widget asks the shop for, backing off. */
interface Confirm {
  id: string;
  since: number;
  stopped: boolean;
  checking: boolean;
  problem: string;
}

const POLL_EVERY = 2000;
const POLL_FOR = 10 * 60 * 1000;
// CONFIRM_FIRST, CONFIRM_GROWTH and CONFIRM_MAX space the checks of an
// unknown outcome: 2 s, then half again each time, at most 15 s apart.
const CONFIRM_FIRST = 2000;
const CONFIRM_GROWTH = 1.5;
const CONFIRM_MAX = 15_000;
const CANCELED = "payment_canceled";

let host: Host;
// latest is the last session a tool result brought; it may arrive before the first render.
let latest: Session | null = null;
let setLatest: (s: Session | null) => void = () => {};
// asked: the render's tool input has come (its result is pending).
let asked = false;
let setAsked: (b: boolean) => void = () => {};
let rerender: () => void = () => {};
// checking is the id of the session being read again from the shop ("" when
// none): the widget is ready once it shows what the shop says now.
let checking = "";
let setChecking: (id: string) => void = () => {};
// gone is the id of a session the shop no longer knows (cleared after it ended).
let gone = "";
let setGone: (id: string) => void = () => {};
// cancelled: the host cancelled the render before its result came.
let cancelled = false;
let setCancelled: (b: boolean) => void = () => {};
// edits counts the changes the buyer made here; a re-read that started
// before one of them is older than what the widget shows.
let edits = 0;
// REREAD_WAIT bounds the wait for the re-read; past it the widget keeps what it has.
const REREAD_WAIT = 5000;
// OUTPUT_GRACE is how long the widget waits, after the tool input, for the
// output of a tool still running before it reads the session itself.
const OUTPUT_GRACE = 3000;

function formOf(s: Session | null, kept: Obj): Form {
  const saved = obj(kept.form);
  if (s && str(kept.session_id) === s.id && Object.keys(saved).length) {
    return { ...address(saved), email: str(saved.email, 254) };
  }
  return { ...(s?.address ?? address({})), email: s?.email ?? "" };
}

/** sectionOf tells where a message or refusal about param belongs. */
function sectionOf(param: string): Section {
  const sec = section(param);
  return sec === "buyer" ? "address" : sec === "items" ? "lines" : sec;
}

/** refusal is the buyer's sentence for a failed call: the catalogs' for a refusal with a code, else the widget's own. */
function refusal(e: unknown, vars: Record<string, string> = {}): string {
  const err = toolError(e);
  return err.code ? say(err, vars) : err.message;
}

function Checkout() {
  const [s, setS] = useState<Session | null>(latest);
  const [order, setOrder] = useState<Order | null>(latest?.order ?? null);
  const [form, setForm] = useState<Form>(() => formOf(latest, host.state()));
  // editing: the buyer chose to change a complete address.
  const [editing, setEditing] = useState(false);
  const [promo, setPromo] = useState(() => str(host.state().promo, 32));
  const [busy, setBusy] = useState<Section | "">("");
  // refused holds the shop's refusals of the last change, by JSONPath.
  const [refused, setRefused] = useState<Record<string, string>>({});
  const [notes, setNotes] = useState<Partial<Record<Section, { text: string; error: boolean }>>>({});
  const [waiting, setWaiting] = useState<Waiting | null>(null);
  const [pending, setPending] = useState(asked);
  const [rechecking, setRechecking] = useState(checking);
  const [lost, setLost] = useState(gone);
  const [restarting, setRestarting] = useState(false);
  const [confirm, setConfirm] = useState<Confirm | null>(null);
  const [reason, setReason] = useState("");
  const [stopped, setStopped] = useState(cancelled);
  const [, tick] = useState(0);
  setCancelled = setStopped;
  setAsked = setPending;
  setChecking = setRechecking;
  setGone = setLost;
  setLatest = (x) => {
    setS(x);
    if (x?.order) setOrder(x.order);
  };
  rerender = () => tick((n) => n + 1);

  useEffect(() => {
    if ((s || lost) && !rechecking) markReady();
  }, [s?.id, !!order, rechecking, lost]);
  // A session in_progress is a payment the shop has not settled yet: confirm it.
  useEffect(() => {
    if (s?.status === "in_progress" && !order && !waiting && !confirm) startConfirm(s.id);
  }, [s?.id, s?.status, !!order, !!waiting, !!confirm]);
  useEffect(() => {
    // A session the model rendered anew replaces the buyer's unsaved form.
    if (s) setForm((f) => (f.line_one || f.name ? f : formOf(s, host.state())));
  }, [s?.id]);

  async function paid(o: Order, id: string) {
    setOrder(o);
    await host.tellModel(`The buyer paid. Order #${o.number} (${o.id}) is confirmed for checkout session ${id}.`, {
      checkout_session_id: id,
      order_id: o.id,
      order_number: o.number,
    });
  }

  const same = (w: Waiting, f: (x: Waiting) => Waiting) => setWaiting((x) => (x && x.since === w.since ? f(x) : x));

  function startConfirm(id: string) {
    setReason("");
    setConfirm({ id, since: Date.now(), stopped: false, checking: false, problem: "" });
  }
  const sameConfirm = (c: Confirm, f: (x: Confirm) => Confirm) => setConfirm((x) => (x && x.since === c.since ? f(x) : x));

  /** settle reads the session once; true when its payment has an outcome (paid, or payable again). */
  async function settle(c: Confirm): Promise<boolean> {
    edits++;
    let next: Session | null;
    try {
      next = readSession(await host.call("get_checkout_session", { checkout_session_id: c.id }));
    } catch (e) {
      sameConfirm(c, (x) => ({ ...x, problem: t("checkFailed", { why: refusal(e) }) }));
      return false;
    }
    if (!next) return false;
    if (next.status === "in_progress" && !next.order) {
      sameConfirm(c, (x) => ({ ...x, problem: "" }));
      return false;
    }
    latest = next;
    setS(next);
    setConfirm(null);
    if (next.order) {
      await paid(next.order, next.id);
    } else if (next.status === "ready_for_payment" || next.status === "not_ready_for_payment") {
      const m = next.messages.find((x) => x.type === "error");
      setReason(m ? say(m) : t("notCompleted"));
    }
    return true;
  }

  // Confirm an unknown outcome: one call at a time, backing off, for POLL_FOR.
  useEffect(() => {
    const c = confirm;
    if (!c || c.stopped) return;
    let live = true;
    let timer = 0;
    let wait = CONFIRM_FIRST;
    const next = async () => {
      if (Date.now() - c.since >= POLL_FOR) return sameConfirm(c, (x) => ({ ...x, stopped: true }));
      if ((await settle(c)) || !live) return;
      wait = Math.min(wait * CONFIRM_GROWTH, CONFIRM_MAX);
      timer = window.setTimeout(next, wait);
    };
    timer = window.setTimeout(next, wait);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [confirm?.since, confirm?.stopped]);

  /** check reads the session once and ends the wait when the payment has an outcome. */
  async function check(w: Waiting) {
    edits++;
    let next: Session | null;
    try {
      next = readSession(await host.call("get_checkout_session", { checkout_session_id: w.id }));
    } catch (e) {
      same(w, (x) => ({ ...x, problem: t("checkFailed", { why: refusal(e) }) }));
      return;
    }
    if (!next) return;
    latest = next;
    setS(next);
    if (next.order) {
      setWaiting(null);
      await paid(next.order, next.id);
    } else if (next.messages.some((m) => m.code === CANCELED)) {
      setWaiting(null);
      await host.tellModel(`The buyer canceled the payment on the shop's payment page; checkout session ${next.id} keeps the cart.`, {
        checkout_session_id: next.id,
        payment_page: "canceled",
      });
    } else if (["completed", "expired", "canceled"].includes(next.status)) {
      setWaiting(null);
    } else {
      same(w, (x) => ({ ...x, problem: "" }));
    }
  }

  // Poll while waiting: every POLL_EVERY, one call at a time, for POLL_FOR.
  useEffect(() => {
    const w = waiting;
    if (!w || w.stopped) return;
    let live = true;
    let timer = 0;
    const next = async () => {
      if (Date.now() - w.since >= POLL_FOR) return same(w, (x) => ({ ...x, stopped: true }));
      await check(w);
      if (live) timer = window.setTimeout(next, POLL_EVERY);
    };
    timer = window.setTimeout(next, POLL_EVERY);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [waiting?.since, waiting?.stopped]);

  /** openPayment opens the shop's payment page (a new link unless the last one still works) and waits. */
  async function openPayment(id: string, last?: Waiting) {
    let url = last?.url ?? "";
    let expires = last?.expires ?? 0;
    if (!last || (expires && expires - Date.now() < 60_000)) {
      const l = paymentLink(await host.call("create_payment_link", { checkout_session_id: id }));
      if (!l) throw new ToolError(t("noLink"));
      ({ url, expires } = l);
    }
    const opened = await host.openLink(url);
    setWaiting({ id, url, expires, opened, since: Date.now(), stopped: false, checking: false, problem: "" });
    if (!last) {
      await host.tellModel(`The buyer is paying for checkout session ${id} on the shop's payment page; the widget shows the receipt once the payment lands.`, {
        checkout_session_id: id,
        payment_page: "opened",
      });
    }
  }

  if (order) {
    const fmt = { currency: s?.currency ?? order.currency, locale: host.locale, display: s?.display ?? order.display };
    return <Receipt order={order} fmt={fmt} onOpen={(u) => void host.openLink(u)} />;
  }
  if (!s && lost) {
    return (
      <p class="notice" role="status" id="gone-notice">
        {t("gone")}
      </p>
    );
  }
  if (!s && stopped) {
    return (
      <p class="notice" role="status" id="cancelled">
        {t("cancelled")}
      </p>
    );
  }
  if (!s) return <p class="muted" role="status">{pending ? t("loadingCart") : t("loadingCheckout")}</p>;
  if (confirm) {
    const c = confirm;
    return (
      <Confirming
        stopped={c.stopped}
        checking={c.checking}
        problem={c.problem}
        onCheck={() => {
          sameConfirm(c, (x) => ({ ...x, checking: true }));
          void settle(c).then((done) => !done && sameConfirm(c, (x) => ({ ...x, checking: false })));
        }}
      />
    );
  }
  const fmt = { currency: s.currency, locale: host.locale, display: s.display };
  sayIn(s.currency);
  if (waiting) {
    const w = waiting;
    const total = s.totals.find((t) => t.type === "total");
    return (
      <PayWaiting
        url={w.url}
        opened={w.opened}
        stopped={w.stopped}
        checking={w.checking}
        problem={w.problem}
        total={total ? money(total.amount, s.currency, host.locale) : ""}
        onCheck={() => {
          same(w, (x) => ({ ...x, checking: true }));
          void check(w).finally(() => same(w, (x) => ({ ...x, checking: false })));
        }}
        onReopen={() => void openPayment(w.id, w).catch((e) => same(w, (x) => ({ ...x, problem: refusal(e) })))}
        onBack={() => setWaiting(null)}
      />
    );
  }

  const keep = (f: Form, p: string) => host.saveState({ session_id: s.id, form: { ...f }, promo: p });
  const note = (sec: Section, text: string, error = false) => setNotes((n) => ({ ...n, [sec]: { text, error } }));

  async function change(sec: Section, args: Obj, done?: string): Promise<boolean> {
    edits++;
    setBusy(sec);
    note(sec, "");
    try {
      const next = readSession(await host.call("update_checkout_session", { checkout_session_id: s!.id, ...args }));
      if (!next) throw new Error(t("notSession"));
      latest = next;
      setS(next);
      setRefused({});
      if (done && !next.messages.some((m) => m.type === "error" && sectionOf(m.param) === sec)) note(sec, done);
      const what: Record<Section, string> = {
        lines: "changed the quantities",
        address: "saved the shipping address",
        shipping: "chose shipping: " + (next.options.find((o) => o.id === next.optionID)?.title ?? str(args.fulfillment_option_id)),
        promo: "entered the promotion code " + str(args.promo_code),
        pay: "changed the checkout",
      };
      await host.tellModel(
        `The buyer ${what[sec]}. Checkout session ${next.id} is ${next.status.replace(/_/g, " ")}; ` +
          `total ${money(next.totals.find((t) => t.type === "total")?.amount ?? 0, next.currency, "en-US")}.`,
        { checkout_session_id: next.id, status: next.status, changed: sec },
      );
      return true;
    } catch (e) {
      const err = toolError(e);
      const vars = { code: str(args.promo_code, 32) };
      if (err.param) setRefused({ [err.param]: err.code ? say(err, vars) : err.message });
      note(err.param ? sectionOf(err.param) : sec, refusal(e, vars), true);
      return false;
    } finally {
      setBusy("");
    }
  }

  // Field errors: the session's error messages and the last refusal, by JSONPath.
  const fieldKeys = new Set([...addressFields.map(fieldParam), fieldParam("email")]);
  const errors: Record<string, string> = {};
  for (const m of s.messages) if (m.type === "error" && m.param && !errors[m.param]) errors[m.param] = say(m);
  Object.assign(errors, refused);
  const other = (sec: Section) =>
    s.messages.filter((m) => (m.param ? sectionOf(m.param) === sec && !fieldKeys.has(m.param) : sec === "pay"));

  const countries = s.countries;
  // A new form's country is the buyer's locale's region, where the shop ships.
  const shownForm = form.country || !countries.length ? form : { ...form, country: countryOf(host.locale, countries) };
  const saveAddress = () => {
    const a: Obj = {};
    for (const f of addressFields) if (shownForm[f].trim()) a[f] = shownForm[f].trim();
    const args: Obj = { fulfillment_address: a };
    if (form.email.trim()) args.buyer = { email: form.email.trim(), ...(form.name.trim() ? { name: form.name.trim() } : {}) };
    void change("address", args, t("addressSaved")).then((ok) => ok && setEditing(false));
  };
  // A complete address shows as text; the form comes when it is missing or wrong, or the buyer changes it.
  const addressWrong = s.messages.some((m) => m.type === "error" && sectionOf(m.param) === "address") || Object.keys(refused).some((k) => sectionOf(k) === "address");
  const asText = !!s.address && !addressWrong && !editing;
  const items = (f: (i: number, q: number) => number) =>
    s.lines.map((l, i) => ({ id: l.itemID, quantity: f(i, l.quantity) })).filter((it) => it.quantity > 0);

  const applyPromo = () => {
    if (promo.trim()) void change("promo", { promo_code: promo.trim() });
  };

  /** restart starts a new checkout with the ended session's items, buyer and address. */
  async function restart() {
    edits++;
    setRestarting(true);
    note("lines", "");
    try {
      const args: Obj = { items: s!.lines.map((l) => ({ id: l.itemID, quantity: l.quantity })) };
      const addr = obj(s!.raw.fulfillment_address);
      if (Object.keys(addr).length) args.fulfillment_address = addr;
      if (s!.email) args.buyer = { email: s!.email, ...(str(obj(s!.raw.buyer).name) ? { name: str(obj(s!.raw.buyer).name, 200) } : {}) };
      const next = readSession(await host.call("create_checkout_session", args));
      if (!next) throw new Error(t("notSession"));
      const old = s!.id;
      latest = next;
      gone = "";
      setLost("");
      setS(next);
      await host.tellModel(
        `The buyer started a new checkout session ${next.id} with the items of ${old}, which had ${lost === old ? "ended" : s!.status.replace(/_/g, " ")}; it is ${next.status.replace(/_/g, " ")}.`,
        { checkout_session_id: next.id, replaces: old, status: next.status },
      );
    } catch (e) {
      note("lines", toolError(e).message, true);
    } finally {
      setRestarting(false);
    }
  }

  const sayAll = (ms: typeof s.messages) => ms.map((m) => ({ m, text: say(m, { code: promo.trim() }) }));
  const ended = lost === s.id || s.status === "canceled" || s.status === "expired";
  const final = ended || s.status === "completed";
  return (
    <main class="stack" data-view="checkout" data-status={s.status}>
      <div class="row">
        <h1>{t("checkout")}</h1>
        {host.canFullscreen() && (
          <button
            type="button"
            id="fullscreen"
            class="linkbtn"
            data-mode={host.displayMode}
            onClick={() => void host.setDisplayMode(host.displayMode === "fullscreen" ? "inline" : "fullscreen").catch((e) => console.warn("display mode:", e))}
          >
            {host.displayMode === "fullscreen" ? t("exitFullscreen") : t("expand")}
          </button>
        )}
      </div>
      {final && (
        <div class="notice stack" role="status" id="ended-notice" style={{ gap: "6px" }}>
          <p>
            {lost === s.id ? t("endedGone") : s.status === "expired" ? t("endedExpired") : s.status === "canceled" ? t("endedCanceled") : t("endedCompleted")}{" "}
            {ended && s.lines.length > 0 ? t("restartHint") : t("askHint")}
          </p>
          {ended && s.lines.length > 0 && (
            <button type="button" id="restart" class="btn primary" disabled={restarting} onClick={() => void restart()}>
              {restarting ? t("restarting") : t("restart")}
            </button>
          )}
        </div>
      )}
      {!final && s.messages.some((m) => m.code === CANCELED) && (
        <p class="notice" role="status" id="pay-notice">
          {t("pageCanceled")}
        </p>
      )}
      <section aria-label={t("items")} class="stack" style={{ gap: "6px" }}>
        <Lines
          lines={s.lines}
          fmt={fmt}
          busy={busy !== "" || final}
          onQuantity={(i, n) => void change("lines", { items: items((j, q) => (j === i ? n : q)) })}
          onRemove={(i) => void change("lines", { items: items((j, q) => (j === i ? 0 : q)) })}
        />
        {sayAll(other("lines")).map(({ m, text }) => (
          <p class="field-error" key={m.param + text}>
            {text}
          </p>
        ))}
        <Status text={notes.lines?.text ?? ""} error={notes.lines?.error} />
      </section>
      <section aria-labelledby="addr-title" class="stack" style={{ gap: "6px" }}>
        <h2 id="addr-title">{t("shippingAddress")}</h2>
        {!asText &&
          sayAll(other("address")).map(({ m, text }) => (
            <p class="muted" key={m.param + text}>
              {text}
            </p>
          ))}
        {asText ? (
          <AddressText address={s.address!} email={s.email} locale={host.locale} busy={busy !== "" || final} onChange={() => {
            setForm(formOf(s, {}));
            setEditing(true);
          }} />
        ) : (
          <AddressForm
            form={shownForm}
            errors={errors}
            busy={busy === "address" || final}
            countries={countries}
            locale={host.locale}
            editing={editing}
            onInput={(k, v) => {
              const f = { ...shownForm, [k]: k === "country" ? v.toUpperCase() : v };
              setForm(f);
              keep(f, promo);
            }}
            onSubmit={saveAddress}
            onCancel={() => {
              setEditing(false);
              setRefused({});
            }}
          />
        )}
        {s.saveAddress !== null && !final && (
          <SaveToAccount checked={s.saveAddress} busy={busy !== ""} onChange={(v) => void change("address", { save_address: v })} />
        )}
        <Status text={notes.address?.text ?? ""} error={notes.address?.error} />
      </section>
      <section aria-label={t("shippingOptions")} class="stack" style={{ gap: "6px" }}>
        <Shipping options={s.options} chosen={s.optionID} fmt={fmt} busy={busy !== "" || final} onChoose={(id) => void change("shipping", { fulfillment_option_id: id })} />
        <Status text={notes.shipping?.text ?? ""} error={notes.shipping?.error} />
      </section>
      <section aria-labelledby="promo-label" class="stack" style={{ gap: "6px" }}>
        <div class="promo">
          <label id="promo-label" for="promo" class="sr-only" style={{ position: "absolute", left: "-9999px" }}>
            {t("promoCode")}
          </label>
          <input
            id="promo"
            type="text"
            placeholder={t("promoCode")}
            maxLength={32}
            value={promo}
            aria-invalid={errors["$.promo_code"] ? "true" : undefined}
            aria-describedby="promo-status"
            onInput={(e) => {
              const p = (e.target as HTMLInputElement).value;
              setPromo(p);
              keep(form, p);
            }}
            onKeyDown={(e) => {
              if (e.key === "Enter") {
                e.preventDefault();
                applyPromo();
              }
            }}
          />
          <button type="button" id="apply-promo" class="btn" disabled={busy !== "" || final || !promo.trim()} onClick={applyPromo}>
            {t("apply")}
          </button>
        </div>
        <div id="promo-status">
          {sayAll(s.messages.filter((m) => m.param === "$.promo_code")).map(({ text }) => (
            <p class="field-error" key={text}>
              {text}
            </p>
          ))}
          <Status text={notes.promo?.text ?? ""} error={notes.promo?.error} />
        </div>
      </section>
      <ul class="notes" id="notes" aria-label={t("notes")}>
        {sayAll(
          // Notes the catalogs have a sentence for; the others are for the
          // model, and the form, the options and the totals show the same.
          // With one shipping option, its checked radio already says it was chosen.
          s.messages.filter((m) => m.type === "info" && !m.param && m.code !== CANCELED && known(m) && !(m.key === "option.selected" && s.options.length < 2)),
        ).map(({ text }) => (
          <li class="muted" key={text}>
            {text}
          </li>
        ))}
      </ul>
      <Totals totals={s.totals} lines={s.lines} option={s.options.find((o) => o.id === s.optionID)} fmt={fmt} />
      <Links links={s.links} onOpen={(u) => void host.openLink(u)} />
      {!final && (
        <Pay
          host={host}
          s={s}
          busy={busy !== ""}
          other={other("pay")}
          reason={reason}
          onStart={() => setReason("")}
          onUnknown={() => startConfirm(s.id)}
          onPaid={(o) => paid(o, s.id)}
          onSession={(x) => {
            edits++;
            setLatest((latest = x));
          }}
          onExternal={() => openPayment(s.id)}
        />
      )}
    </main>
  );
}

/**
 * reread reads session id from the shop and shows it, unless the buyer
 * changed something meanwhile: the tool output a host keeps may be days old.
 */
async function reread(id: string) {
  if (!id || checking === id) return;
  checking = id;
  setChecking(id);
  const at = edits;
  await Promise.resolve(); // the host may still be being made (window.openai's output comes at once)
  let timer = 0;
  try {
    const late = new Promise<never>((_, reject) => {
      timer = window.setTimeout(() => reject(new Error("no answer in time")), REREAD_WAIT);
    });
    const fresh = readSession(await Promise.race([host.call("get_checkout_session", { checkout_session_id: id }), late]));
    if (fresh && fresh.id === id && at === edits) {
      latest = fresh;
      setLatest(fresh);
    }
  } catch (e) {
    const err = toolError(e);
    if (err.code === "not_found" && at === edits) {
      gone = id;
      setGone(id);
    } else {
      console.warn("could not read the checkout session again:", err.message);
    }
  } finally {
    clearTimeout(timer);
    if (checking === id) {
      checking = "";
      setChecking("");
    }
  }
}

host = new Host("shop-checkout", {
  input: (args) => {
    asked = true;
    setAsked(true);
    // A host that sends no output (re-mounting the widget) still names the
    // session in the input; a running tool's output comes within the grace.
    const id = str(args.checkout_session_id, 64);
    window.setTimeout(() => {
      if (!latest) void reread(id);
    }, OUTPUT_GRACE);
  },
  result: (sc) => {
    const s = readSession(sc);
    if (s) {
      latest = s;
      setLatest(s);
      void reread(s.id);
    }
  },
  changed: () => rerender(),
  cancelled: () => {
    cancelled = true;
    setCancelled(true);
  },
}, ["inline", "fullscreen"]);
// Neither output nor input (a host re-mounting the widget from its state):
// the session the buyer last worked on.
if (!latest && !asked) void reread(str(host.state().session_id, 64));
render(<Checkout />, document.getElementById("root")!);
