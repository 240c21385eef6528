/**
 * Per-file setup of the workers suites: a migrated local D1 (storage is fresh
 * per file) and the network guard, so no test can reach the network.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach, vi } from "vitest";
import { assertNoUnexpectedRequests, installNetworkGuard } from "../fakes/network";

beforeAll(async () => {
  await applyD1Migrations(env.CONTACTS!, env.TEST_MIGRATIONS);
});

beforeEach(() => {
  installNetworkGuard();
  // Keep the run's output readable: telemetry lines are captured by the tests that assert on them.
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation(() => undefined);
  }
});

afterEach(() => {
  assertNoUnexpectedRequests();
});
