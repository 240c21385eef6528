/**
 * What the kept `tools/list` answers rest on (worker/mcp/listing-cache.ts):
 * the key names every request header the SDK reads before it answers a
 * listing. The SDK code the monolith bundles is scanned for header reads; each
 * one is either in `VARY_HEADERS` or below with the reason it cannot change a
 * listing's answer. An SDK upgrade that reads one more header fails here,
 * before a kept answer could stand for a request the SDK would answer
 * differently.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bundleFacts } from "../helpers/bundle";
import { VARY_HEADERS } from "../../worker/mcp/listing-cache";

/** Header reads that never reach a listing, and why. */
const NOT_FOR_A_LISTING: Record<string, string> = {
  "content-length": "read only when the SDK reads the body itself; the door always hands it the parsed body",
  host: "the 2025 transport's DNS-rebinding check, off unless allowedHosts is given (the door checks the host itself)",
  origin: "the same DNS-rebinding check, off unless allowedOrigins is given",
  authorization: "the bearer-auth middleware, which the public server does not use",
  "access-control-request-headers": "the CORS preflight helper (OPTIONS), which the door does not use",
  "<computed>": "Mcp-Param-* headers, checked only for a tool that declares x-mcp-header; a kept call's tool (about_magnt) declares none",
};

/** Every header name read as `headers.get(…)`, `headers.has(…)` or `headers[…]` in `source`; computed names as `<computed>`. */
export function headerReads(source: string): Set<string> {
  const names = new Set<string>();
  for (const match of source.matchAll(/headers(?:\.(?:get|has)\(\s*|\[\s*)([^)\]]+?)\s*[)\]]/g)) {
    const literal = /^(["'`])([^"'`]+)\1$/.exec(match[1]!);
    names.add(literal ? literal[2]!.toLowerCase() : "<computed>");
  }
  return names;
}

describe("the listing key covers the SDK's header reads", () => {
  it("finds header reads, and a read it was not told about", () => {
    expect([...headerReads('a.headers.get("Mcp-Method"); b.headers.has(\'x-new\'); c.headers[key]; d.headers["accept"]')]).toEqual(["mcp-method", "x-new", "<computed>", "accept"]);
  });

  it("every header the bundled SDK reads is in the key or cannot change a listing", async () => {
    const facts = await bundleFacts("worker/entries/monolith.ts");
    const sdkFiles = facts.inputs.filter((path) => /@modelcontextprotocol[\\/]server[\\/]/.test(path));
    expect(sdkFiles.length).toBeGreaterThan(0);
    const read = new Set<string>();
    for (const file of sdkFiles) for (const name of headerReads(readFileSync(file, "utf8"))) read.add(name);
    for (const name of VARY_HEADERS) expect(read, `the SDK no longer reads ${name}: the key may drop it`).toContain(name);
    const unexplained = [...read].filter((name) => !(VARY_HEADERS as readonly string[]).includes(name) && !(name in NOT_FOR_A_LISTING));
    expect(unexplained).toEqual([]);
  });
});
