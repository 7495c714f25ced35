// Builds each widget into one self-contained HTML file in ../dist (inline
// JavaScript and CSS, nothing loaded from elsewhere), and the browser tests'
// host page into build/ (not embedded in the shop). The output depends only
// on the sources and the locked packages: same input, same bytes.
//
//   node build.mjs    (npm run build)

import * as esbuild from "esbuild";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

// zod, which the MCP SDK validates messages with, bundles the error messages
// of 40-odd languages that nothing here shows (errors are for developers);
// keeping English only saves about 250 kB per widget.
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: 'export { default as en } from "./en.js";',
      loader: "js",
      resolveDir: dirname(args.path),
    }));
  },
};

// ext-apps imports zod as `import { z } from "zod/v4"`, a namespace that
// esbuild keeps whole (every zod API, JSON Schema conversion included);
// `import * as z` names the same exports and lets esbuild keep only those
// used. Its message schemas also carry 98 .describe("…") texts, which only
// a JSON Schema generated from them would show: validation is the same
// without them. A build of a newer ext-apps without that import fails here,
// so the size check is never silently lost.
const zodNamespaceImport = {
  name: "zod-namespace-import",
  setup(build) {
    build.onLoad({ filter: /[\\/]@modelcontextprotocol[\\/]ext-apps[\\/]dist[\\/]src[\\/]app\.js$/ }, async (args) => {
      const src = await readFile(args.path, "utf8");
      const out = src.replace(/import\{z as ([\w$]+)\}from"zod\/v4"/g, 'import*as $1 from"zod/v4"');
      if (out === src) throw new Error(`${args.path}: no import { z } from "zod/v4" to rewrite; revisit build.mjs`);
      const described = /\.describe\((?:"(?:[^"\\\n]|\\.)*"|`[^`$]*`)\)/g;
      return { contents: out.replace(described, ""), loader: "js", resolveDir: dirname(args.path) };
    });
  },
};

// ext-apps takes only Protocol from @modelcontextprotocol/client, whose
// index also loads its Client, OAuth helpers and JSON Schema validators for
// their side effects; the widgets use none of them. Marking the package's
// modules free of side effects lets esbuild drop what nothing imports.
const clientWithoutSideEffects = {
  name: "client-without-side-effects",
  setup(build) {
    build.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === "resolved" || args.kind === "entry-point") return undefined;
      const r = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: "resolved" });
      if (r.errors.length || !/[\\/]@modelcontextprotocol[\\/]client[\\/]/.test(r.path)) return r;
      return { ...r, sideEffects: false };
    });
  },
};

async function bundle(entry, { minify }) {
  const result = await esbuild.build({
    entryPoints: [join(here, entry)],
    bundle: true,
    minify,
    write: false,
    outdir: "out",
    format: "iife",
    platform: "browser",
    target: ["es2022", "chrome110", "firefox115", "safari16"],
    jsx: "automatic",
    jsxImportSource: "preact",
    legalComments: "none",
    charset: "utf8",
    logLevel: "warning",
    define: { "process.env.NODE_ENV": '"production"' },
    plugins: minify ? [zodEnglishOnly, zodNamespaceImport, clientWithoutSideEffects] : [zodEnglishOnly],
  });
  const pick = (ext) => result.outputFiles.filter((f) => f.path.endsWith(ext)).map((f) => f.text).join("");
  return { js: pick(".js"), css: pick(".css") };
}

// inline checks that text can sit inside <script> or <style>: nothing in it
// may end the element early. (esbuild already escapes "</script" in strings.)
function inline(text, tag) {
  const bad = new RegExp("</" + tag + "|<!--", "i").exec(text);
  if (bad) throw new Error(`the bundle holds ${JSON.stringify(bad[0])}, which would end its <${tag}> element`);
  return text;
}

function page(title, { js, css }) {
  return (
    "<!doctype html>\n" +
    // No lang: the widget sets the host's locale, and reads one a host set first.
    "<html>\n<head>\n<meta charset=\"utf-8\">\n" +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    `<title>${title}</title>\n` +
    (css ? `<style>${inline(css, "style")}</style>\n` : "") +
    "</head>\n<body>\n<div id=\"root\"></div>\n" +
    `<script>${inline(js, "script")}</script>\n` +
    "</body>\n</html>\n"
  );
}

const widgets = [
  { name: "products", title: "Products" },
  { name: "checkout", title: "Checkout" },
];

await mkdir(join(here, "..", "dist"), { recursive: true });
for (const w of widgets) {
  const html = page(w.title, await bundle(`src/${w.name}.tsx`, { minify: true }));
  await writeFile(join(here, "..", "dist", `${w.name}.html`), html);
  console.log(`dist/${w.name}.html: ${Buffer.byteLength(html)} bytes`);
}

await mkdir(join(here, "build"), { recursive: true });
await writeFile(join(here, "build", "testhost.html"), page("Test host", await bundle("testhost/host.ts", { minify: false })));
console.log("web/build/testhost.html");
