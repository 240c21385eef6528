/**
 * Debian's Chromium as every browser test launches it (spec 10 §1): the
 * system binary through playwright-core, headless, with nothing that reaches
 * the network on its own (updates, sync, QUIC, background fetches).
 */
export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
