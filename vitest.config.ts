/**
 * Four Vitest projects (spec 10 §1):
 * - workers: the Worker in the real workerd runtime with a real local D1 (no Wrangler process);
 * - split:   the split deployment in workerd: the gateway as the main Worker, core (and later the
 *            owner gateway) as auxiliary Workers bundled by test/split/global-setup.ts;
 * - node:    CLI logic, contracts, configs and pure functions in Node;
 * - e2e:     suites that start the door with Wrangler and run the built CLI as a child process.
 * `npm test` runs workers + node + split; `npm run test:e2e` runs e2e.
 */
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { activeAuxiliaryWorkers, bundlePath, SPLIT_D1_ID } from "./test/split/topology.js";

/** The production-like names the workers suites address the door with (10 §1). */
export const TEST_VARS = {
  PUBLIC_ORIGIN: "https://magnt.ru",
  ALLOWED_HOSTS: "magnt.ru,www.magnt.ru",
  SITE_ORIGIN: "https://raw.githubusercontent.com/redkov-dev/cortex/main",
};

/**
 * Time limits of the fast suites. Vitest's default of 5 s per test is a speed
 * assumption: on a shared 2-core CI machine at load 5 a property test that takes
 * 1 s alone takes 6 s. No test asserts on time, so a limit only has to stop a
 * hung test; 60 s per test and 120 s per hook is an order of magnitude above
 * the slowest test seen on a loaded machine (issue 20, 10 §1).
 */
const FAST_SUITE_LIMITS = { testTimeout: 60_000, hookTimeout: 120_000 } as const;

/** compatibility_date of every deployable config (00 §3). */
const COMPATIBILITY_DATE = "2026-04-01";

/** The auxiliary Workers of the split project, loaded from the globalSetup's bundles. */
function splitAuxiliaryWorkers() {
  return activeAuxiliaryWorkers().map((worker) => ({
    name: worker.name,
    modules: true,
    scriptPath: bundlePath(worker),
    compatibilityDate: COMPATIBILITY_DATE,
    bindings: { ...TEST_VARS, ...worker.bindings },
    d1Databases: { ...worker.d1Databases },
    serviceBindings: { ...worker.serviceBindings },
    ...(worker.outboundService ? { outboundService: worker.outboundService } : {}),
  }));
}

/** Bindings of the split project's runner (the gateway) that reach each auxiliary Worker's test taps. */
function splitTestBindings() {
  return Object.fromEntries(
    activeAuxiliaryWorkers().flatMap((worker) => [
      ...(worker.testBinding ? [[worker.testBinding, { name: worker.name, entrypoint: "TestTaps" }]] : []),
      ...Object.entries(worker.runnerBindings ?? {}),
    ]),
  );
}

export default defineConfig(async () => {
  const migrations = await readD1Migrations("migrations");
  return {
    test: {
      projects: [
        {
          plugins: [
            cloudflareTest({
              main: "./worker/entries/monolith.ts",
              wrangler: { configPath: "./wrangler.local.jsonc" },
              miniflare: {
                bindings: {
                  ...TEST_VARS,
                  TEST_MIGRATIONS: migrations,
                  // workerd has no process.env: the fuzz knobs travel as bindings (10 §5).
                  FUZZ_RUNS: process.env.FUZZ_RUNS ?? "200",
                  FC_SEED: process.env.FC_SEED ?? "",
                },
              },
            }),
          ],
          test: {
            name: "workers",
            ...FAST_SUITE_LIMITS,
            include: ["test/worker/**/*.test.ts", "test/fuzz/**/*.test.ts"],
            setupFiles: ["./test/worker/setup.ts"],
          },
        },
        {
          plugins: [
            cloudflareTest({
              main: "./worker/entries/gateway.ts",
              // The gateway's own config: its CORE binding to magnt-core is the one under test.
              wrangler: { configPath: "./wrangler.gateway.jsonc" },
              miniflare: {
                bindings: { ...TEST_VARS, TEST_MIGRATIONS: migrations },
                // The test's view of core's database (same id, so the same storage): migrate and inspect.
                d1Databases: { TEST_CONTACTS: SPLIT_D1_ID },
                serviceBindings: splitTestBindings(),
                workers: splitAuxiliaryWorkers(),
              },
            }),
          ],
          test: {
            name: "split",
            ...FAST_SUITE_LIMITS,
            include: ["test/split/**/*.test.ts"],
            globalSetup: ["./test/split/global-setup.ts"],
            setupFiles: ["./test/split/setup.ts"],
          },
        },
        {
          test: {
            name: "node",
            ...FAST_SUITE_LIMITS,
            environment: "node",
            include: ["test/node/**/*.test.ts", "test/cli/**/*.test.ts"],
          },
        },
        {
          test: {
            name: "e2e",
            environment: "node",
            include: ["test/e2e/**/*.test.ts"],
            testTimeout: 180_000,
            hookTimeout: 180_000,
            fileParallelism: false,
          },
        },
      ],
    },
  };
});
