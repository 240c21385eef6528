import type { TestTaps } from "./workers/taps";

declare global {
  namespace Cloudflare {
    interface Env {
      /** Split project only: core's D1 database, seen from the test runner (same id, same storage). */
      TEST_CONTACTS?: D1Database;
      /** Split project only: core's test taps (console lines, rate-limit keys). */
      TEST_CORE?: Service<TestTaps>;
      /** Split project only, once the owner gateway is active: its test taps. */
      TEST_OWNER?: Service<TestTaps>;
    }
  }
}
export {};
