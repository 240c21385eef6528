/**
 * Three Vitest projects (spec 10 §1):
 * - workers: the Worker in the real workerd runtime with a real local D1 (no Wrangler process);
 * - node:    CLI logic, contracts, configs and pure functions in Node;
 * - e2e:     suites that start the door with Wrangler and run the built CLI as a child process.
 * `npm test` runs workers + node; `npm run test:e2e` runs e2e.
 */
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

/** The production-like names the workers suites address the door with (10 §1). */
export const TEST_VARS = {
  PUBLIC_ORIGIN: "https://magnt.ru",
  ALLOWED_HOSTS: "magnt.ru,www.magnt.ru",
  SITE_ORIGIN: "https://raw.githubusercontent.com/redkov-dev/cortex/main",
};

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
            include: ["test/worker/**/*.test.ts", "test/fuzz/**/*.test.ts"],
            setupFiles: ["./test/worker/setup.ts"],
          },
        },
        {
          test: {
            name: "node",
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
