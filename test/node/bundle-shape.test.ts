/**
 * What the smaller bundle rests on (issue 21 item 4):
 * - `keep_names` is off in every Wrangler config, which is safe only because
 *   nothing in the Worker depends on a minified function or class name: every
 *   error class names itself, and no code reads `constructor.name`;
 * - the SDK's workerd shim is replaced by `worker/mcp/sdk-shims.ts` through a
 *   Wrangler `alias`, so the elicitation-form validator
 *   (`@cfworker/json-schema`) stays out; the replacement exports what the
 *   SDK's shim exports, so an SDK upgrade that changes the shim fails here.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseJsonc } from "../../cli/lib/jsonc";
import { bundleFacts, wranglerAliases } from "../helpers/bundle";

const CONFIGS = ["wrangler.jsonc", "wrangler.core.jsonc", "wrangler.gateway.jsonc", "wrangler.owner.jsonc", "wrangler.local.jsonc"];
const SHIM = "@modelcontextprotocol/server/_shims";
const VALIDATOR = /@cfworker[\\/]json-schema|cfWorkerProvider/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** Each `class X extends …Error` in `text`, with whether its body assigns `this.name = "X"`. */
function errorClasses(text: string): { name: string; namesItself: boolean }[] {
  return [...text.matchAll(/class (\w+) extends (\w*Error)\b[^{]*\{/g)].map((match) => {
    const body = text.slice(match.index! + match[0].length);
    const end = body.search(/\n\}/);
    return { name: match[1]!, namesItself: body.slice(0, end).includes(`this.name = "${match[1]}"`) };
  });
}

describe("keep_names off", () => {
  it("is set in every Wrangler config", () => {
    for (const config of CONFIGS) {
      expect((parseJsonc(readFileSync(config, "utf8")) as { keep_names?: unknown }).keep_names, config).toBe(false);
    }
  });

  it("every error class of the Worker sets its own name, and no code reads a constructor's name", () => {
    const found: string[] = [];
    for (const file of sourceFiles("worker")) {
      const text = readFileSync(file, "utf8");
      expect(text, file).not.toMatch(/constructor\.name|\.prototype\.name|Function\.name/);
      for (const entry of errorClasses(text)) {
        found.push(entry.name);
        expect(entry.namesItself, `${file}: class ${entry.name} must set this.name = "${entry.name}"`).toBe(true);
      }
    }
    expect(found.sort()).toEqual(["CoreUnavailable", "OwnerLedgerRefused", "StorageError", "Unread"]);
  });

  it("the scan fails on an error class that relies on its class name", () => {
    expect(errorClasses('class Quiet extends Error {\n  constructor() {\n    super("x");\n  }\n}\n')).toEqual([{ name: "Quiet", namesItself: false }]);
  });

  it("the exported error classes carry their names at run time", async () => {
    const { StorageError } = await import("../../worker/storage/d1");
    const { OwnerLedgerRefused } = await import("../../worker/mcp/owner-rpc");
    expect(new StorageError().name).toBe("StorageError");
    expect(new OwnerLedgerRefused().name).toBe("OwnerLedgerRefused");
  });
});

describe("the elicitation-form validator stays out", () => {
  it("every Wrangler config aliases the SDK's shim to the door's", () => {
    for (const config of CONFIGS) expect(wranglerAliases(config), config).toEqual({ [SHIM]: "./worker/mcp/sdk-shims.ts" });
  });

  it("the replacement exports exactly what the SDK's workerd shim exports", async () => {
    const sdkShim = await import("../../node_modules/@modelcontextprotocol/server/dist/shimsWorkerd.mjs");
    const doorShim = await import("../../worker/mcp/sdk-shims");
    expect(Object.keys(doorShim).sort()).toEqual(Object.keys(sdkShim).sort());
  });

  it("fails closed if anything ever asks it to validate", async () => {
    const { DefaultJsonSchemaValidator } = await import("../../worker/mcp/sdk-shims");
    const result = new DefaultJsonSchemaValidator().getValidator({ type: "object" })({});
    expect(result.valid).toBe(false);
  });

  it("the monolith and core carry no @cfworker/json-schema; without the alias they would", async () => {
    for (const entry of ["worker/entries/monolith.ts", "worker/entries/core.ts"]) {
      const facts = await bundleFacts(entry);
      expect(Object.keys(facts.bytesInOutput).filter((path) => VALIDATOR.test(path)), entry).toEqual([]);
    }
    const unaliased = await bundleFacts("worker/entries/monolith.ts", { alias: {} });
    expect(Object.keys(unaliased.bytesInOutput).some((path) => VALIDATOR.test(path))).toBe(true);
  }, 120_000);
});
