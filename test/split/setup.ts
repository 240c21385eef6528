/**
 * Per-file setup of the split suites: core's D1 migrated through the runner's
 * own binding to the same database, the network guard, a quiet console, and
 * core's taps cleared before every test.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, vi } from "vitest";
import { assertNoUnexpectedRequests, installNetworkGuard } from "../fakes/network";
import { coreDb, coreTaps } from "./helpers";

beforeAll(async () => {
  await applyD1Migrations(coreDb(), env.TEST_MIGRATIONS);
});

beforeEach(async () => {
  installNetworkGuard();
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation(() => undefined);
  }
  await coreTaps().reset();
});

afterEach(() => {
  assertNoUnexpectedRequests();
});
