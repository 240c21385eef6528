/**
 * The WebAssembly record reader (cli/commands/metrics/wasm-reader.ts, decision
 * 223) is committed as the module its AssemblyScript source compiles to
 * (`wasm/reader.generated.ts`): this compiles the source again with the pinned
 * compiler and fails when the two differ, so the reader the CLI runs is always
 * the reader the source says (its behaviour is tested in metrics-fastpath.test.ts).
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("the WebAssembly reader's module", () => {
  it("is what its source compiles to", () => {
    const run = spawnSync(process.execPath, ["scripts/build-metrics-wasm.mjs", "--check"], { encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
  }, 60_000);
});
