/**
 * The client snippets `magnt dev --owner` prints (cli/lib/client-configs.ts)
 * are the ones docs/clients.md and docs/ru/clients.md show, for the default
 * local ports: a change to one that forgets the other fails here. And they
 * carry nothing but URLs.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { clientConfigLines, clientConfigs } from "../../cli/lib/client-configs";
import { REPO_ROOT } from "./harness";

const LOCAL = clientConfigs("http://localhost:8787/mcp", "http://localhost:8788/mcp");
const pretty = (compact: string) => JSON.stringify(JSON.parse(compact), null, 2);

describe.each(["docs/clients.md", "docs/ru/clients.md"])("%s", (file) => {
  const text = readFileSync(join(REPO_ROOT, file), "utf8");
  it("shows Claude Code's commands, for local and production", () => {
    for (const line of LOCAL.claudeCode) expect(text).toContain(line);
    expect(text).toContain("claude mcp add --transport http magnt-owner https://owner.magnt.ru/mcp");
    expect(text).toContain("claude mcp add --transport http magnt-door https://magnt.ru/mcp");
  });
  it.each(["claudeDesktop", "vscode", "cursor"] as const)("shows the %s configuration exactly as printed", (client) => {
    expect(text).toContain(pretty(LOCAL[client]));
  });
});

describe("clientConfigs", () => {
  it("reaches the owner MCP through mcp-remote where the client's own sign-in would be refused, the door directly", () => {
    expect(JSON.parse(LOCAL.vscode)).toEqual({
      servers: {
        "magnt-owner": { type: "stdio", command: "npx", args: ["-y", "mcp-remote", "http://localhost:8788/mcp"] },
        "magnt-door": { type: "http", url: "http://localhost:8787/mcp" },
      },
    });
    expect(JSON.parse(LOCAL.cursor)).toEqual({
      mcpServers: {
        "magnt-owner": { command: "npx", args: ["-y", "mcp-remote", "http://localhost:8788/mcp"] },
        "magnt-door": { url: "http://localhost:8787/mcp" },
      },
    });
  });
  it("without an owner URL: the door only", () => {
    const door = clientConfigs("http://localhost:9000/mcp");
    expect(door.claudeCode).toEqual(["claude mcp add --transport http magnt-door http://localhost:9000/mcp"]);
    expect(clientConfigLines(door).join("\n")).not.toContain("magnt-owner");
  });
});
