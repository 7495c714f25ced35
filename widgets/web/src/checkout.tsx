// The checkout widget (ui://shop/checkout-v1.html): render_checkout's
// session with its lines, address, shipping, promotion, totals and legal
// links, every change made through update_checkout_session; Pay hands the
// session to the host's payment sheet (window.openai.requestCheckout) and
// the order it answers becomes the receipt.

import "./lib/jitless";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { address, addressFields, checkoutOutcome, obj, session as readSession, str, type Obj, type Order, type Session } from "./lib/data";
import { money } from "./lib/format";
import { Host, markReady, toolError } from "./lib/host";
import { Status } from "./lib/ui";
import { AddressForm, fieldParam, Lines, Links, Receipt, Shipping, Totals, type Form } from "./checkout/parts";
import "./styles.css";

type Section = "lines" | "address" | "shipping" | "promo" | "pay";

let host: Host;
// latest is the last session a tool result brought; it may arrive before the first render.
let latest: Session | null = null;
let setLatest: (s: Session | null) => void = () => {};
let rerender: () => void = () => {};

function formOf(s: Session | null, kept: Obj): Form {
  const saved = obj(kept.form);
  if (s && str(kept.session_id) === s.id && Object.keys(saved).length) {
    return { ...address(saved), email: str(saved.email, 254) };
  }
  return { ...(s?.address ?? address({})), email: s?.email ?? "" };
}

/** sectionOf tells where a message or refusal about param belongs. */
function sectionOf(param: string): Section {
  if (param.startsWith("$.fulfillment_address") || param.startsWith("$.buyer")) return "address";
  if (param.startsWith("$.fulfillment_option")) return "shipping";
  if (param.startsWith("$.promo_code")) return "promo";
  if (param.startsWith("$.line_items") || param.startsWith("$.items")) return "lines";
  return "pay";
}

function Checkout() {
  const [s, setS] = useState<Session | null>(latest);
  const [order, setOrder] = useState<Order | null>(latest?.order ?? null);
  const [form, setForm] = useState<Form>(() => formOf(latest, host.state()));
  const [promo, setPromo] = useState(() => str(host.state().promo, 32));
  const [busy, setBusy] = useState<Section | "">("");
  // refused holds the shop's refusals of the last change, by JSONPath.
  const [refused, setRefused] = useState<Record<string, string>>({});
  const [notes, setNotes] = useState<Partial<Record<Section, { text: string; error: boolean }>>>({});
  const [, tick] = useState(0);
  setLatest = (x) => {
    setS(x);
    if (x?.order) setOrder(x.order);
  };
  rerender = () => tick((n) => n + 1);

  useEffect(() => {
    if (s) markReady();
  }, [s?.id, !!order]);
  useEffect(() => {
    // A session the model rendered anew replaces the buyer's unsaved form.
    if (s) setForm((f) => (f.line_one || f.name ? f : formOf(s, host.state())));
  }, [s?.id]);

  if (order) return <Receipt order={order} fmt={{ currency: s?.currency ?? order.currency, locale: host.locale }} onOpen={(u) => void host.openLink(u)} />;
  if (!s) return <p class="muted" role="status">Loading the checkout…</p>;
  const fmt = { currency: s.currency, locale: host.locale };

  const keep = (f: Form, p: string) => host.saveState({ session_id: s.id, form: { ...f }, promo: p });
  const note = (sec: Section, text: string, error = false) => setNotes((n) => ({ ...n, [sec]: { text, error } }));

  async function change(sec: Section, args: Obj, done?: string) {
    setBusy(sec);
    note(sec, "");
    try {
      const next = readSession(await host.call("update_checkout_session", { checkout_session_id: s!.id, ...args }));
      if (!next) throw new Error("the shop answered something that is not a checkout session");
      latest = next;
      setS(next);
      setRefused({});
      if (done && !next.messages.some((m) => m.type === "error" && sectionOf(m.param) === sec)) note(sec, done);
      await host.tellModel(
        `The buyer changed the checkout (${sec}). Session ${next.id} is ${next.status.replace(/_/g, " ")}; ` +
          `total ${money(next.totals.find((t) => t.type === "total")?.amount ?? 0, next.currency, "en-US")}.`,
        { checkout_session_id: next.id, status: next.status },
      );
    } catch (e) {
      const err = toolError(e);
      if (err.param) setRefused({ [err.param]: err.message });
      note(err.param ? sectionOf(err.param) : sec, err.message, true);
    } finally {
      setBusy("");
    }
  }

  // Field errors: the session's error messages and the last refusal, by JSONPath.
  const errors: Record<string, string> = {};
  for (const m of s.messages) if (m.type === "error" && m.param && !errors[m.param]) errors[m.param] = m.content;
  Object.assign(errors, refused);
  const fieldKeys = new Set([...addressFields.map(fieldParam), fieldParam("email")]);
  const other = (sec: Section) =>
    s.messages.filter((m) => (m.param ? sectionOf(m.param) === sec && !fieldKeys.has(m.param) : sec === "pay"));

  const saveAddress = () => {
    const a: Obj = {};
    for (const f of addressFields) if (form[f].trim()) a[f] = form[f].trim();
    const args: Obj = { fulfillment_address: a };
    if (form.email.trim()) args.buyer = { email: form.email.trim(), ...(form.name.trim() ? { name: form.name.trim() } : {}) };
    void change("address", args, "Address saved.");
  };
  const items = (f: (i: number, q: number) => number) =>
    s.lines.map((l, i) => ({ id: l.itemID, quantity: f(i, l.quantity) })).filter((it) => it.quantity > 0);

  const applyPromo = () => {
    if (promo.trim()) void change("promo", { promo_code: promo.trim() });
  };

  const final = ["completed", "canceled", "expired"].includes(s.status);
  return (
    <main class="stack" data-view="checkout" data-status={s.status}>
      <h1>Checkout</h1>
      {final && (
        <p class="notice" role="status">
          This checkout is {s.status}. Ask the assistant to start a new one.
        </p>
      )}
      <section aria-label="Items" class="stack" style={{ gap: "6px" }}>
        <Lines
          lines={s.lines}
          fmt={fmt}
          busy={busy !== "" || final}
          onQuantity={(i, n) => void change("lines", { items: items((j, q) => (j === i ? n : q)) })}
          onRemove={(i) => void change("lines", { items: items((j, q) => (j === i ? 0 : q)) })}
        />
        {other("lines").map((m) => (
          <p class="field-error" key={m.param + m.content}>
            {m.content}
          </p>
        ))}
        <Status text={notes.lines?.text ?? ""} error={notes.lines?.error} />
      </section>
      <section aria-labelledby="addr-title" class="stack" style={{ gap: "6px" }}>
        <h2 id="addr-title">Shipping address</h2>
        {other("address").map((m) => (
          <p class="muted" key={m.param + m.content}>
            {m.content}
          </p>
        ))}
        <AddressForm
          form={form}
          errors={errors}
          busy={busy === "address" || final}
          onInput={(k, v) => {
            const f = { ...form, [k]: k === "country" ? v.toUpperCase() : v };
            setForm(f);
            keep(f, promo);
          }}
          onSubmit={saveAddress}
        />
        <Status text={notes.address?.text ?? ""} error={notes.address?.error} />
      </section>
      <section aria-label="Shipping options" class="stack" style={{ gap: "6px" }}>
        <Shipping options={s.options} chosen={s.optionID} fmt={fmt} busy={busy !== "" || final} onChoose={(id) => void change("shipping", { fulfillment_option_id: id })} />
        <Status text={notes.shipping?.text ?? ""} error={notes.shipping?.error} />
      </section>
      <section aria-labelledby="promo-label" class="stack" style={{ gap: "6px" }}>
        <div class="promo">
          <label id="promo-label" for="promo" class="sr-only" style={{ position: "absolute", left: "-9999px" }}>
            Promotion code
          </label>
          <input
            id="promo"
            type="text"
            placeholder="Promotion code"
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
            Apply
          </button>
        </div>
        <div id="promo-status">
          {s.messages
            .filter((m) => m.param === "$.promo_code")
            .map((m) => (
              <p class="field-error" key={m.content}>
                {m.content}
              </p>
            ))}
          <Status text={notes.promo?.text ?? ""} error={notes.promo?.error} />
        </div>
      </section>
      <ul class="notes" id="notes" aria-label="Notes">
        {s.messages
          .filter((m) => m.type === "info" && !m.param)
          .map((m) => (
            <li class="muted" key={m.content}>
              {m.content}
            </li>
          ))}
      </ul>
      <Totals totals={s.totals} fmt={fmt} />
      <Links links={s.links} onOpen={(u) => void host.openLink(u)} />
      {!final && <Pay s={s} busy={busy !== ""} other={other("pay")} onPaid={setOrder} onSession={(x) => setLatest((latest = x))} />}
    </main>
  );
}

/** Pay hands the session to the host's payment sheet, or says how to finish without one. */
function Pay({ s, busy, other, onPaid, onSession }: {
  s: Session;
  busy: boolean;
  other: { content: string; code: string }[];
  onPaid(o: Order): void;
  onSession(s: Session): void;
}) {
  const [paying, setPaying] = useState(false);
  const [error, setError] = useState("");
  const ready = s.status === "ready_for_payment";
  const total = s.totals.find((t) => t.type === "total");
  const sheet = host.requestCheckout;
  const declined = other.filter((m) => m.code === "payment_declined" || m.code === "requires_3ds");
  const problems = s.messages.filter((m) => m.type === "error").length;

  async function pay() {
    if (!sheet) return;
    setPaying(true);
    setError("");
    try {
      const out = checkoutOutcome(await sheet(s.raw));
      if (out.order) {
        onPaid(out.order);
        await host.tellModel(`The buyer paid. Order #${out.order.number} (${out.order.id}) is confirmed for checkout session ${s.id}.`, {
          checkout_session_id: s.id,
          order_id: out.order.id,
          order_number: out.order.number,
        });
        return;
      }
      if (out.session) onSession(out.session);
      const why = out.session?.messages.find((m) => m.type === "error")?.content;
      setError(out.error || why || "The payment was not completed. You can try again.");
    } catch (e) {
      setError("The payment did not go through: " + (e instanceof Error ? e.message : String(e)) + " You can try again.");
    } finally {
      setPaying(false);
    }
  }

  return (
    <section aria-label="Payment" class="stack" style={{ gap: "6px" }}>
      {(error || declined.length > 0) && (
        <p class="notice error" role="alert" id="pay-error">
          {error || declined[0].content}
        </p>
      )}
      {sheet ? (
        <>
          <button type="button" id="pay" class="btn primary wide" disabled={!ready || busy || paying} aria-describedby="pay-hint" onClick={() => void pay()}>
            {paying ? "Paying…" : "Pay " + (total ? money(total.amount, s.currency, host.locale) : "")}
          </button>
          <p class="muted" id="pay-hint">
            {ready
              ? s.paymentMode === "test"
                ? "Test mode: no real money moves."
                : "You confirm the payment in the next step."
              : problems
                ? `Fix the ${problems === 1 ? "item" : problems + " items"} marked above to pay.`
                : "This checkout is not ready for payment yet."}
          </p>
        </>
      ) : (
        <div class="notice" id="pay-elsewhere">
          <p>
            {ready
              ? "Your order is ready. To pay, continue in the chat: ask the assistant to complete the purchase."
              : "Complete the details above, then continue in the chat to pay."}
          </p>
          {ready && host.canSay() && (
            <button type="button" class="btn" onClick={() => void host.say(`I'm ready to pay for checkout session ${s.id}.`).catch(() => {})}>
              Continue in chat
            </button>
          )}
        </div>
      )}
    </section>
  );
}

host = new Host("shop-checkout", {
  result: (sc) => {
    const s = readSession(sc);
    if (s) {
      latest = s;
      setLatest(s);
    }
  },
  changed: () => rerender(),
});
render(<Checkout />, document.getElementById("root")!);
