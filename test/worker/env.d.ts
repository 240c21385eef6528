import type { D1Migration } from "cloudflare:test";
import type { Env as DoorEnv } from "../../worker/config/env";

declare global {
  namespace Cloudflare {
    interface Env extends DoorEnv {
      TEST_MIGRATIONS: D1Migration[];
      FUZZ_RUNS: string;
      FC_SEED: string;
    }
  }
}
export {};
