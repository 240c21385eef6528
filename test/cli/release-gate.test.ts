/**
 * The release-gate workflow derives the MCP endpoint from the origin of the
 * URL it is given (so the site, a page or the probe URL all work as input).
 * The test runs the workflow's own step script with bash, as GitHub Actions
 * does (`bash --noprofile --norc -eo pipefail`), offline.
 */
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "./harness";

const WORKFLOW = readFileSync(join(REPO_ROOT, ".github", "workflows", "release-gate.yml"), "utf8");

/** The `run: |` block of the step that derives MCP_URL, de-indented. */
function deriveStepScript(): string {
  const match = /- name: Require a URL[^\n]*\n(?:\s+#[^\n]*\n)*\s+run: \|\n((?:(?: {10}[^\n]*)?\n)+)/.exec(WORKFLOW);
  if (match === null) throw new Error("release-gate.yml: the URL step was not found");
  return match[1]!.split("\n").map((line) => line.slice(10)).join("\n");
}

function derive(url: string): { code: number | null; mcpUrl: string | undefined; output: string } {
  const dir = mkdtempSync(join(tmpdir(), "magnt-gate-"));
  const script = join(dir, "step.sh");
  const githubEnv = join(dir, "github_env");
  writeFileSync(script, deriveStepScript());
  writeFileSync(githubEnv, "");
  const run = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], {
    env: { PATH: process.env.PATH, DOOR_URL: url, GITHUB_ENV: githubEnv },
    encoding: "utf8",
  });
  const mcpUrl = /^MCP_URL=(.*)$/m.exec(readFileSync(githubEnv, "utf8"))?.[1];
  return { code: run.status, mcpUrl, output: run.stdout + run.stderr };
}

describe("release-gate.yml", () => {
  it.each([
    ["https://magnt.ru", "https://magnt.ru/mcp"],
    ["https://magnt.ru/", "https://magnt.ru/mcp"],
    ["https://magnt.ru/__magnt_probe", "https://magnt.ru/mcp"],
    ["https://magnt.ru/mcp", "https://magnt.ru/mcp"],
    ["https://www.magnt.ru/some/page?x=1#top", "https://www.magnt.ru/mcp"],
    ["http://127.0.0.1:8787/__magnt_probe", "http://127.0.0.1:8787/mcp"],
  ])("%s → %s", (input, expected) => {
    const result = derive(input);
    expect(result.code, result.output).toBe(0);
    expect(result.mcpUrl).toBe(expected);
  });

  it.each(["", "not a url", "ftp://magnt.ru/"])("%j is refused (exit 2, no MCP_URL)", (input) => {
    const result = derive(input);
    expect(result.code).toBe(2);
    expect(result.mcpUrl).toBeUndefined();
    expect(result.output).toContain("::error::");
  });

  it("smoke uses the derived endpoint; probe-check gets the URL as given", () => {
    expect(WORKFLOW).toContain('node bin/magnt.js smoke "$MCP_URL" --submit-test --shared-memory-test');
    expect(WORKFLOW).toContain('node bin/magnt.js probe-check "$DOOR_URL"');
    expect(WORKFLOW).not.toContain("${DOOR_URL%/}/mcp");
  });
});
