// Imported first by each widget: zod (which the MCP SDK validates messages
// with) probes for eval with `new Function` when its first object schema is
// built, and the SDK builds its schemas as its modules load, before ext-apps'
// App constructor turns the probe off. Under the host's CSP (no
// 'unsafe-eval') that probe is a CSP violation, so turn it off before any of
// those modules runs.
import { config } from "zod/v4/core";

config({ jitless: true });
