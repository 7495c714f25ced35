// The products widget (ui://shop/products-v1.html): render_products' result
// as cards, a few (CAROUSEL_MAX or fewer) in a row the buyer scrolls
// sideways, more in a grid; the buyer picks a variant and a quantity and
// adds it to a cart, which is a checkout session created or updated
// through tools/call.

import "./lib/jitless";
import { render } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { int, list, obj, products as readProducts, session as readSession, str, type Obj, type Product, type Session, type Variant } from "./lib/data";
import { money } from "./lib/format";
import { Host, markReady, ToolError, toolError } from "./lib/host";
import { addCatalogs, t } from "./lib/i18n";
import { deProducts } from "./lib/messages/de";
import { enProducts } from "./lib/messages/en";
import { esProducts } from "./lib/messages/es";
import { frProducts } from "./lib/messages/fr";
import { jaProducts } from "./lib/messages/ja";
import { ptBRProducts } from "./lib/messages/pt-BR";
import { say } from "./lib/says";
import { Img, MAX_QUANTITY, Status, Stepper } from "./lib/ui";
import "./styles.css";

interface Choice {
  variant: string;
  qty: number;
}

interface CartItem {
  id: string;
  quantity: number;
}

/** State is what the widget asks the host to keep (setWidgetState). */
interface State {
  session_id: string;
  cart: CartItem[];
  choices: Record<string, Choice>;
}

function readState(v: Obj): State {
  const choices: Record<string, Choice> = {};
  for (const [k, c] of Object.entries(obj(v.choices)).slice(0, 20)) {
    choices[k.slice(0, 64)] = { variant: str(obj(c).variant, 64), qty: Math.max(1, int(obj(c).qty)) };
  }
  const cart = list(v.cart, (x) => (str(obj(x).id, 64) ? { id: str(obj(x).id, 64), quantity: int(obj(x).quantity) } : null), 100);
  return { session_id: str(v.session_id, 64), cart, choices };
}

addCatalogs({ en: enProducts, es: esProducts, fr: frProducts, de: deProducts, ja: jaProducts, "pt-BR": ptBRProducts });

let host: Host;
// latest is the last tool result; it may arrive before the first render.
let latest: Product[] | null = null;
let setProducts: (p: Product[] | null) => void = () => {};
// lookup says what the pending render looks up (from its tool input).
let lookup = "";
let setLookup: (s: string) => void = () => {};
let rerender: () => void = () => {};
// cancelled: the host cancelled the render before its result came.
let cancelled = false;
let setCancelled: (b: boolean) => void = () => {};

/** CAROUSEL_MAX is the most products shown as a carousel; more go in a grid. */
const CAROUSEL_MAX = 4;

/** lookingUp is what a render with these arguments looks up: "Searching for “mug”…". */
function lookingUp(args: Obj): string {
  const q = str(args.query, 100).trim();
  if (q) return t("searchingFor", { q });
  const n = Array.isArray(args.product_ids) ? args.product_ids.length : 0;
  return n ? t("lookingUp", { n }) : "";
}

function variantLabel(p: Product): string {
  const names = p.variants[0]?.options.map(([k]) => k) ?? [];
  return names.length ? names.join(" / ") : t("variant");
}

function chosen(p: Product, c: Choice | undefined): Variant | undefined {
  return p.variants.find((v) => v.id === c?.variant) ?? p.variants.find((v) => v.available > 0) ?? p.variants[0];
}

function Card({ p, choice, busy, onChoose, onAdd }: {
  p: Product;
  choice: Choice | undefined;
  busy: boolean;
  onChoose(c: Choice): void;
  onAdd(v: Variant, qty: number): void;
}) {
  const v = chosen(p, choice);
  const qty = Math.min(choice?.qty ?? 1, Math.max(1, v?.available ?? 1));
  const id = "p-" + p.id;
  const image = v?.image || p.images[0] || "";
  return (
    <article class="card" aria-labelledby={id + "-title"} data-product={p.id}>
      <Img src={image} alt={p.title + (v && p.variants.length > 1 ? ", " + v.title : "")} />
      <div>
        <h2 id={id + "-title"}>{p.title}</h2>
        {p.category && <p class="muted">{p.category}</p>}
      </div>
      <div class="row">
        <span class="price">{v ? money(v.price.amount, v.price.currency, host.locale) : ""}</span>
        {v && v.available > 0 ? (
          <span class="stock-ok">{v.available <= 5 ? t("onlyLeft", { n: v.available }) : t("inStock")}</span>
        ) : (
          <span class="stock-out">{t("outOfStock")}</span>
        )}
      </div>
      {p.variants.length > 1 && (
        <div>
          <label for={id + "-variant"}>{variantLabel(p)}</label>
          <select
            id={id + "-variant"}
            value={v?.id}
            onChange={(e) => onChoose({ variant: (e.target as HTMLSelectElement).value, qty })}
          >
            {p.variants.map((x) => (
              <option value={x.id} key={x.id}>
                {x.available > 0 ? x.title : t("optionOut", { title: x.title })}
              </option>
            ))}
          </select>
        </div>
      )}
      <div class="row">
        <Stepper
          label={t("quantityOf", { name: p.title })}
          value={qty}
          max={Math.max(1, Math.min(v?.available ?? 1, MAX_QUANTITY))}
          disabled={!v || v.available === 0}
          onChange={(n) => v && onChoose({ variant: v.id, qty: n })}
        />
        <button
          type="button"
          class="btn primary"
          aria-label={t("addToCartLabel", { title: p.title })}
          disabled={busy || !v || v.available === 0}
          onClick={() => v && onAdd(v, qty)}
        >
          {busy ? t("adding") : t("addToCart")}
        </button>
      </div>
    </article>
  );
}

function Products() {
  const [items, setItems] = useState<Product[] | null>(latest);
  const [looking, setLooking] = useState(lookup);
  const [state, setState] = useState<State>(() => readState(host.state()));
  const [busy, setBusy] = useState("");
  const [status, setStatus] = useState({ text: "", error: false });
  const [stopped, setStopped] = useState(cancelled);
  const [, tick] = useState(0);
  setCancelled = setStopped;
  setProducts = setItems;
  setLookup = setLooking;
  rerender = () => tick((n) => n + 1);

  useEffect(() => {
    if (items) markReady();
  }, [items]);

  const save = (s: State) => {
    setState(s);
    host.saveState(s as unknown as Obj);
  };

  const count = useMemo(() => state.cart.reduce((n, it) => n + it.quantity, 0), [state.cart]);

  async function add(p: Product, v: Variant, qty: number) {
    setBusy(p.id);
    setStatus({ text: "", error: false });
    const merged = state.cart.filter((it) => it.id !== v.id);
    const before = state.cart.find((it) => it.id === v.id)?.quantity ?? 0;
    const items = [...merged, { id: v.id, quantity: Math.min(before + qty, MAX_QUANTITY) }];
    try {
      let s: Session | null = null;
      if (state.session_id) {
        try {
          s = readSession(await host.call("update_checkout_session", { checkout_session_id: state.session_id, items }));
        } catch (e) {
          // The session ended (paid, expired, canceled): start a new cart.
          if (!(e instanceof ToolError && e.param === "$.checkout_session_id")) throw e;
        }
      }
      if (!s) s = readSession(await host.call("create_checkout_session", { items: [{ id: v.id, quantity: qty }] }));
      if (!s) throw new Error(t("notSession"));
      const cart = s.lines.map((l) => ({ id: l.itemID, quantity: l.quantity }));
      save({ ...state, session_id: s.id, cart });
      const stock = s.messages.find((m) => m.type === "error" && m.code === "out_of_stock");
      const sub = s.totals.find((t) => t.type === "subtotal");
      const n = cart.reduce((a, it) => a + it.quantity, 0);
      setStatus(
        stock
          ? { text: say(stock), error: true }
          : { text: `${t("added", { qty, title: p.title })} ${t("cartCount", { n })}${sub ? ", " + money(sub.amount, s.currency, host.locale) : ""}.`, error: false },
      );
      const lines = s.lines.map((l) => `${l.quantity} × ${l.name} (${l.itemID})`).join("; ");
      await host.tellModel(
        `The buyer added ${qty} × ${p.title} — ${v.title} (variant ${v.id}) to the cart. Checkout session ${s.id} now holds: ${lines}. ` +
          `To show the checkout, call render_checkout with checkout_session_id "${s.id}".`,
        { checkout_session_id: s.id, items: cart },
      );
    } catch (e) {
      const err = toolError(e);
      setStatus({ text: t("addFailed", { why: err.code ? say(err) : err.message }), error: true });
    } finally {
      setBusy("");
    }
  }

  if (items === null && stopped) {
    return (
      <p class="notice" role="status" id="cancelled">
        {t("cancelled")}
      </p>
    );
  }
  if (items === null) return <p class="muted" role="status">{looking || t("loadingProducts")}</p>;
  if (items.length === 0) return <p role="status">{t("noProducts")}</p>;
  const layout = items.length <= CAROUSEL_MAX ? "carousel" : "grid";
  return (
    <main class="stack">
      <div class={layout} data-layout={layout} role="region" aria-label={t("products")} tabIndex={layout === "carousel" ? 0 : undefined}>
        {items.map((p) => (
          <Card
            key={p.id}
            p={p}
            choice={state.choices[p.id]}
            busy={busy === p.id}
            onChoose={(c) => save({ ...state, choices: { ...state.choices, [p.id]: c } })}
            onAdd={(v, qty) => add(p, v, qty)}
          />
        ))}
      </div>
      <Status text={status.text} error={status.error} />
      {state.session_id && count > 0 && host.canSay() && (
        <button
          type="button"
          class="btn wide"
          onClick={() => void host.say(`Show my checkout (checkout session ${state.session_id}).`).catch(() => {})}
        >
          {t("checkOut", { n: count })}
        </button>
      )}
    </main>
  );
}

host = new Host("shop-products", {
  input: (args) => {
    lookup = lookingUp(args);
    setLookup(lookup);
  },
  result: (sc) => {
    latest = readProducts(sc);
    setProducts(latest);
  },
  changed: () => rerender(),
  cancelled: () => {
    cancelled = true;
    setCancelled(true);
  },
});
render(<Products />, document.getElementById("root")!);
