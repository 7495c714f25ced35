// Fails when a built widget is over its budget: BUDGET bytes gzipped (at
// zlib's default level, as most servers compress). The widgets are inlined
// into a host's frame on every render, so their size is their first paint.
//
//   node size.mjs    (part of npm run check, after npm run build)

import { readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";

const BUDGET = 100_000;
let over = false;
for (const name of ["products", "checkout"]) {
  const html = await readFile(new URL(`../dist/${name}.html`, import.meta.url));
  const gz = gzipSync(html).length;
  console.log(`dist/${name}.html: ${html.length} bytes, ${gz} gzipped (budget ${BUDGET})`);
  if (gz > BUDGET) {
    console.error(`dist/${name}.html is ${gz - BUDGET} bytes over its budget of ${BUDGET} gzipped`);
    over = true;
  }
}
if (over) process.exit(1);
