/**
 * The gateway must not carry the tool stack (docs/architecture.md): the public
 * route table — what the gateway deploys in front of core — bundles neither
 * the MCP SDK nor zod nor any capability. The test also bundles a module that
 * does import the stack, to prove the check can fail.
 */
import { describe, expect, it } from "vitest";
import { bundleFacts, carried, OWNER_GATEWAY_FORBIDDEN } from "../helpers/bundle";

const FORBIDDEN = [/@modelcontextprotocol[\\/]server/, /node_modules[\\/]zod[\\/]/, /^worker\/(contacts|signals|notify|owner|dialogue)\//];

function forbiddenInputs(inputs: readonly string[]): string[] {
  return inputs.filter((input) => FORBIDDEN.some((pattern) => pattern.test(input)));
}

describe("bundle inputs", () => {
  it("the public route table bundles no MCP server code, no zod and no capability", async () => {
    const { inputs } = await bundleFacts("worker/entries/public-routes.ts");
    expect(inputs).toContain("worker/mcp/http.ts");
    expect(forbiddenInputs(inputs)).toEqual([]);
  }, 60_000);

  it("the check fails on a module that carries the tool stack (the monolith)", async () => {
    const { inputs } = await bundleFacts("worker/entries/monolith.ts");
    const found = forbiddenInputs(inputs);
    expect(found.some((input) => /@modelcontextprotocol/.test(input))).toBe(true);
    expect(found.some((input) => /zod/.test(input))).toBe(true);
    expect(found.some((input) => input.startsWith("worker/contacts/"))).toBe(true);
  }, 60_000);

  it("the owner gateway carries no tool code and no MCP server code", async () => {
    const facts = await bundleFacts("worker/entries/owner-gateway.ts");
    expect(Object.keys(facts.bytesInOutput)).toContain("worker/owner/oauth/token.ts");
    expect(carried(facts, OWNER_GATEWAY_FORBIDDEN)).toEqual([]);
  }, 60_000);

  it("the owner-gateway rule fails on a module that carries the tools (core)", async () => {
    const found = carried(await bundleFacts("worker/entries/core.ts"), OWNER_GATEWAY_FORBIDDEN);
    expect(found).toContain("worker/owner/tools.ts");
    expect(found.some((path) => /@modelcontextprotocol/.test(path))).toBe(true);
  }, 60_000);
});
