// The widget's side of the host: the MCP Apps bridge (ext-apps' App class)
// for tool input and results, tools/call, open-link, model context,
// messages, theme, locale and size; and ChatGPT's window.openai extensions,
// each used only after feature detection.

import {
  App,
  applyDocumentTheme,
  applyHostFonts,
  applyHostStyleVariables,
  type McpUiHostContext,
} from "@modelcontextprotocol/ext-apps";
import { obj, params, str, type Obj } from "./data";
import { setLocale, t } from "./i18n";

/** OpenAI is the part of ChatGPT's window.openai the widgets may use. */
interface OpenAI {
  theme?: unknown;
  locale?: unknown;
  toolInput?: unknown;
  toolOutput?: unknown;
  widgetState?: unknown;
  setWidgetState?: (state: unknown) => unknown;
  requestCheckout?: (session: unknown) => Promise<unknown>;
  requestDisplayMode?: (o: { mode: string }) => Promise<unknown>;
  displayMode?: unknown;
  callTool?: (name: string, args: Obj) => Promise<unknown>;
  openExternal?: (o: { href: string }) => unknown;
}

function openai(): OpenAI | undefined {
  const o = (window as unknown as { openai?: unknown }).openai;
  return o !== null && typeof o === "object" ? (o as OpenAI) : undefined;
}

/** ToolError is a tool's refusal (isError), with the field at fault. */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly param = "",
    readonly code = "",
    /** key and params name the refusal for the catalogs ("promo.unknown", {code}). */
    readonly key = "",
    readonly params: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** toolError turns a failed call (a refusal or a broken bridge) into a ToolError. */
export function toolError(e: unknown): ToolError {
  if (e instanceof ToolError) return e;
  return new ToolError(t("unreachable", { why: e instanceof Error ? e.message : String(e) }));
}

export interface Handlers {
  /** input receives the render tool's arguments (untrusted) while its result is pending. */
  input?(args: Obj): void;
  /** result receives a tool result's structuredContent (untrusted). */
  result(structured: unknown): void;
  /** changed is called when the theme, the locale or the display changed. */
  changed(): void;
  /** cancelled is called when the host cancelled the render tool (ui/notifications/tool-cancelled). */
  cancelled?(): void;
}

/** Host is the widget's connection to the host that renders it. */
export class Host {
  readonly app: App;
  // The lang a host set on the document before the widget ran (the
  // built page sets none), else the browser's.
  locale = document.documentElement.lang || navigator.language || "en-US";
  theme: "light" | "dark" = matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  /** displayMode is how the host shows the widget now: inline, fullscreen or pip. */
  displayMode = "inline";
  private bridged = false;
  /** connected settles when the bridge connects (or fails to). */
  private connected: Promise<void>;

  constructor(name: string, private handlers: Handlers, displayModes: ("inline" | "fullscreen" | "pip")[] = ["inline"]) {
    this.app = new App({ name, version: "1" }, { availableDisplayModes: displayModes }, { autoResize: true });
    this.app.ontoolcancelled = () => handlers.cancelled?.();
    this.app.ontoolinput = (p) => handlers.input?.(obj(p.arguments));
    this.app.ontoolresult = (r) => {
      if (r.structuredContent !== undefined) handlers.result(r.structuredContent);
    };
    this.app.onhostcontextchanged = (ctx) => this.context(ctx);
    const oa = openai();
    this.fromOpenAI(oa);
    if (oa?.toolOutput) handlers.result(oa.toolOutput);
    else if (oa?.toolInput) handlers.input?.(obj(oa.toolInput));
    // ChatGPT announces changes of its globals with this event.
    window.addEventListener("openai:set_globals", (e) => {
      const globals = obj((e as CustomEvent).detail).globals;
      this.fromOpenAI(obj(globals) as OpenAI);
      this.apply();
      const out = obj(globals).toolOutput;
      if (out) handlers.result(out);
      handlers.changed();
    });
    this.apply();
    this.connected = this.app.connect().then(() => {
      this.bridged = true;
      const ctx = this.app.getHostContext();
      if (ctx) this.context(ctx);
    });
    this.connected.catch((e) => console.warn("MCP Apps bridge unavailable:", e));
  }

  private fromOpenAI(oa: OpenAI | undefined) {
    if (oa?.theme === "dark" || oa?.theme === "light") this.theme = oa.theme;
    if (typeof oa?.locale === "string" && oa.locale) this.locale = oa.locale;
    if (typeof oa?.displayMode === "string" && oa.displayMode) this.displayMode = oa.displayMode;
  }

  private context(ctx: Partial<McpUiHostContext>) {
    if (ctx.theme === "dark" || ctx.theme === "light") this.theme = ctx.theme;
    if (typeof ctx.locale === "string" && ctx.locale) this.locale = ctx.locale;
    if (typeof ctx.displayMode === "string") this.displayMode = ctx.displayMode;
    if (ctx.styles?.variables) applyHostStyleVariables(ctx.styles.variables);
    if (ctx.styles?.css?.fonts) applyHostFonts(ctx.styles.css.fonts);
    this.apply();
    this.handlers.changed();
  }

  private apply() {
    applyDocumentTheme(this.theme);
    document.documentElement.lang = this.locale;
    setLocale(this.locale);
  }

  /** call runs a tool of the shop through the host and answers its structuredContent. */
  async call(name: string, args: Obj): Promise<unknown> {
    let res: Obj;
    const oa = openai();
    if (!this.bridged && typeof oa?.callTool === "function") {
      res = obj(await oa.callTool(name, args));
    } else {
      await this.connected; // a call before the bridge is up waits for it
      res = obj(await this.app.callServerTool({ name, arguments: args }));
    }
    if (res.isError === true) {
      const e = obj(obj(res.structuredContent).error);
      const text = Array.isArray(res.content) ? res.content.map((c) => str(obj(c).text)).join(" ") : "";
      throw new ToolError(str(e.message) || text || t("refused"), str(e.param), str(e.code), str(e.key, 80), params(e.params));
    }
    return res.structuredContent;
  }

  /** tellModel updates what the model knows of the widget (ui/update-model-context). */
  async tellModel(text: string, structured?: Obj): Promise<void> {
    if (!this.app.getHostCapabilities()?.updateModelContext) return;
    try {
      await this.app.updateModelContext({ content: [{ type: "text", text }], structuredContent: structured });
    } catch (e) {
      console.warn("update-model-context failed:", e);
    }
  }

  /** canSay reports whether the host takes a message into the conversation. */
  canSay(): boolean {
    return !!this.app.getHostCapabilities()?.message;
  }

  /** say sends a message into the conversation as the buyer (ui/message). */
  async say(text: string): Promise<void> {
    await this.app.sendMessage({ role: "user", content: [{ type: "text", text }] });
  }

  /**
   * openLink asks the host to open url (the widget's sandbox cannot) and
   * answers whether something opened it; false means the buyer must open
   * the link by hand.
   */
  async openLink(url: string): Promise<boolean> {
    // Without the bridge (a host that speaks window.openai alone) a request
    // would wait for an answer that never comes.
    if (this.bridged) {
      try {
        const r = await this.app.openLink({ url });
        if (!r.isError) return true;
      } catch {
        /* a host without open-link: try the others */
      }
    }
    const oa = openai();
    if (typeof oa?.openExternal === "function") {
      try {
        await oa.openExternal({ href: url });
        return true;
      } catch {
        /* fall through */
      }
    }
    try {
      const w = window.open(url, "_blank");
      if (w) w.opener = null;
      return !!w;
    } catch {
      return false;
    }
  }

  /** requestCheckout is ChatGPT's payment sheet, when the host has one. */
  get requestCheckout(): ((session: unknown) => Promise<unknown>) | undefined {
    const oa = openai();
    return typeof oa?.requestCheckout === "function" ? (s) => oa.requestCheckout!(s) : undefined;
  }

  /** canFullscreen reports whether the host offers to show the widget fullscreen. */
  canFullscreen(): boolean {
    if (this.bridged) return !!this.app.getHostContext()?.availableDisplayModes?.includes("fullscreen");
    return typeof openai()?.requestDisplayMode === "function";
  }

  /**
   * setDisplayMode asks the host to show the widget fullscreen or inline
   * again (ui/request-display-mode) and keeps the mode the host answers.
   */
  async setDisplayMode(mode: "inline" | "fullscreen"): Promise<void> {
    const res = obj(this.bridged ? await this.app.requestDisplayMode({ mode }) : await openai()?.requestDisplayMode?.({ mode }));
    this.displayMode = str(res.mode, 20) || mode;
    this.handlers.changed();
  }

  /** state is the widget state the host kept for this widget, if any. */
  state(): Obj {
    return obj(openai()?.widgetState);
  }

  /** saveState asks the host to keep what the buyer chose across re-renders. */
  saveState(state: Obj): void {
    const oa = openai();
    if (typeof oa?.setWidgetState === "function") {
      try {
        void Promise.resolve(oa.setWidgetState(state)).catch(() => {});
      } catch {
        /* a host without widget state: nothing to keep */
      }
    }
  }
}

/** markReady tells whoever watches (the browser tests) that data is on screen. */
export function markReady(): void {
  document.body.dataset.state = "ready";
}
