/**
 * Per-file setup of the workers suites: a migrated local D1 (storage is fresh
 * per file) and the network guard, so no test can reach the network.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, beforeEach } from "vitest";
import { assertNoUnexpectedRequests, installNetworkGuard } from "../fakes/network";

beforeAll(async () => {
  await applyD1Migrations(env.CONTACTS!, env.TEST_MIGRATIONS);
});

beforeEach(() => {
  installNetworkGuard();
});

afterEach(() => {
  assertNoUnexpectedRequests();
});
