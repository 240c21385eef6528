/**
 * The split deployment as the "split" Vitest project runs it (00 §3, 10 §1):
 * the public gateway is the pool's main Worker (so `SELF` is magnt-observer in
 * the gateway role) and every other deployable is a Miniflare auxiliary Worker.
 *
 * The pool hands auxiliary Workers to Miniflare without bundling them, so the
 * project's globalSetup (./global-setup.ts) bundles each entry below with
 * esbuild into `dist/test-workers/<name>.mjs` first. Node-side module: imported
 * by vitest.config.ts and the globalSetup, never by a test.
 *
 * Adding a deployable is one entry in `AUXILIARY_WORKERS`. An entry whose
 * module is not on disk yet is inactive: not bundled, not started, not bound.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { githubStandIn } from "./owner-github-stand-in.js";
import { DIALOGUE_CORE_VARS } from "./dialogue-fixture.js";
import { OWNER_GATEWAY_VARS, OWNER_SHARED_VARS } from "./owner-fixture.js";

/** The production-like variables every split Worker runs with (the workers project's TEST_VARS). */
export interface SplitVars {
  readonly [name: string]: string;
}

/** One auxiliary Worker of the split topology. */
export interface AuxiliaryWorker {
  /** The deployable's role. */
  readonly role: "core" | "owner_gateway";
  /** The Worker name of 00 §3 (what Service Bindings point at); its bundle is `dist/test-workers/<name>.mjs`. */
  readonly name: string;
  /** The real entry module, repository-relative. */
  readonly entry: string;
  /** Its D1 bindings (binding name → database id shared inside the Miniflare instance). */
  readonly d1Databases?: Readonly<Record<string, string>>;
  /** Its Service Bindings (binding name → Worker name, optionally a named entrypoint). */
  readonly serviceBindings?: Readonly<Record<string, string | { name: string; entrypoint: string }>>;
  /** A binding on the main (gateway) Worker that reaches this Worker's test taps. */
  readonly testBinding?: string;
  /** More bindings on the main (gateway) Worker that reach this Worker (its default `fetch` or a named entrypoint), for tests that call it directly. */
  readonly runnerBindings?: Readonly<Record<string, string | { name: string; entrypoint: string }>>;
  /** Its variables, secrets and flags, over the shared production-like variables. */
  readonly bindings?: SplitVars;
  /** Where its outbound `fetch` goes (Miniflare `outboundService`): a loopback stand-in, never the network. */
  readonly outboundService?: (request: Request) => Promise<Response>;
}

/**
 * The one D1 database of the topology. Miniflare keys local D1 storage by the
 * database id, so every Worker of one instance that binds this id shares the
 * same database: core as `CONTACTS`, the test runner as `TEST_CONTACTS`.
 */
export const SPLIT_D1_ID = "00000000-0000-4000-8000-0000000051a7";

/** Where the globalSetup writes the bundles. */
export const TEST_WORKERS_DIR = "dist/test-workers";

/** The test-only taps module every auxiliary bundle carries beside its real entry (console lines, limiter keys). */
export const TAPS_MODULE = "test/split/workers/taps.ts";

export const AUXILIARY_WORKERS: readonly AuxiliaryWorker[] = [
  {
    role: "core",
    name: "magnt-core",
    entry: "worker/entries/core.ts",
    d1Databases: { CONTACTS: SPLIT_D1_ID },
    // A recording fake of the Workers Rate Limiting binding (01 §14): always allows, remembers each key.
    serviceBindings: { PUBLIC_WRITES: { name: "magnt-core", entrypoint: "RateLimitRecorder" } },
    testBinding: "TEST_CORE",
    // The owner suites call OwnerEntrypoint straight, as only the owner gateway may in production.
    runnerBindings: { TEST_OWNER_CORE: { name: "magnt-core", entrypoint: "OwnerEntrypoint" } },
    // Both owner flags on: the public surface must not change with them (06 §1, test/split/discovery.test.ts).
    bindings: { ...OWNER_SHARED_VARS },
  },
  // ── Owner gateway (B.1, 06): active once worker/entries/owner-gateway.ts exists. ──
  {
    role: "owner_gateway",
    name: "magnt-owner",
    entry: "worker/entries/owner-gateway.ts",
    serviceBindings: { OWNER_CORE: { name: "magnt-core", entrypoint: "OwnerEntrypoint" } },
    testBinding: "TEST_OWNER",
    runnerBindings: { OWNER_GATEWAY: "magnt-owner" },
    bindings: { ...OWNER_GATEWAY_VARS },
    // Its only outbound calls are GitHub's (06 §3.4): answered by the loopback stand-in in this process.
    outboundService: githubStandIn,
  },
  // ── The dialogue variant (C.1, 07): the same entries with every dialogue flag on, on the same D1. ──
  // magnt-core stays with the dialogue off, so the byte-for-byte comparisons with the monolith keep
  // proving that the public surface does not change while the flags are off (07 §1). The public
  // gateway reaches this core when a suite passes `DIALOGUE_CORE` as its `CORE` (test/split/dialogue-helpers.ts).
  {
    role: "core",
    name: "magnt-core-dialogue",
    entry: "worker/entries/core.ts",
    d1Databases: { CONTACTS: SPLIT_D1_ID },
    serviceBindings: { PUBLIC_WRITES: { name: "magnt-core-dialogue", entrypoint: "RateLimitRecorder" } },
    testBinding: "TEST_DIALOGUE_CORE",
    runnerBindings: { DIALOGUE_CORE: "magnt-core-dialogue" },
    bindings: { ...OWNER_SHARED_VARS, ...DIALOGUE_CORE_VARS },
  },
  {
    role: "owner_gateway",
    name: "magnt-owner-dialogue",
    entry: "worker/entries/owner-gateway.ts",
    serviceBindings: { OWNER_CORE: { name: "magnt-core-dialogue", entrypoint: "OwnerEntrypoint" } },
    testBinding: "TEST_DIALOGUE_OWNER",
    runnerBindings: { DIALOGUE_OWNER_GATEWAY: "magnt-owner-dialogue" },
    // The owner gateway reads no dialogue flag (07 §1: core decides what is registered; 06 §4: its 401 never advertises owner.publish).
    bindings: { ...OWNER_GATEWAY_VARS },
    outboundService: githubStandIn,
  },
];

/** The auxiliary Workers whose entry module exists in the working tree. */
export function activeAuxiliaryWorkers(root = process.cwd()): AuxiliaryWorker[] {
  return AUXILIARY_WORKERS.filter((worker) => existsSync(resolve(root, worker.entry)));
}

/** One bundle per Worker name: two Workers of one role (the dialogue variant) never write the same file. */
export function bundlePath(worker: Pick<AuxiliaryWorker, "name">, root = process.cwd()): string {
  return resolve(root, TEST_WORKERS_DIR, `${worker.name}.mjs`);
}
