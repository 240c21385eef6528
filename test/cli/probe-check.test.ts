/**
 * `magnt probe-check` (08 §8): probe URL derivation, every check, defaults
 * from the contracts, options, exit 0/1/2/3 against a local HTTP server, and
 * the controlled User-Agent.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { CONTROLLED_TEST_USER_AGENT, DIALOGUE_RELEASE, MCP_DOOR_VERSION, OWNER_RELEASE, SHARED_MEMORY_VERSION } from "../../worker/contracts";
import { evaluateProbe, probeUrlFor } from "../../cli/commands/probe-check";
import { runMagnt } from "./harness";

const GOOD_PROBE = {
  ok: true,
  service: "magnt-observer",
  role: "monolith",
  mcp_door_version: MCP_DOOR_VERSION,
  shared_memory_version: SHARED_MEMORY_VERSION,
  owner_release: OWNER_RELEASE,
  dialogue_release: DIALOGUE_RELEASE,
  dialogue_enabled: false,
  contact_storage_configured: true,
  shared_memory_storage_configured: true,
  origin: "builtin",
  time: "2026-01-01T00:00:00.000Z",
  host: "127.0.0.1",
  path: "/__magnt_probe",
  clientKind: "bot",
  clientName: "magnt",
  country: "",
  colo: "",
};
const GOOD_HEADERS = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" };

let server: Server | undefined;
let seen: { path?: string; userAgent?: string } = {};
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(status: number, headers: Record<string, string>, body: string): Promise<string> {
  server = createServer((req, res) => {
    seen = { path: req.url, userAgent: req.headers["user-agent"] };
    res.writeHead(status, headers).end(body);
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const expectations = { versions: { mcp_door_version: MCP_DOOR_VERSION }, storage: true, dialogue: "any" as const };

describe("probe URL", () => {
  it.each([
    ["https://magnt.ru/", "https://magnt.ru/__magnt_probe"],
    ["https://magnt.ru/mcp?x=1", "https://magnt.ru/__magnt_probe"],
    ["http://127.0.0.1:8787/__magnt_probe", "http://127.0.0.1:8787/__magnt_probe"],
  ])("%s → %s", (input, expected) => {
    expect(probeUrlFor(input).href).toBe(expected);
  });
});

describe("evaluateProbe", () => {
  const ids = (checks: { id: string; ok: boolean }[]) => checks.filter((check) => !check.ok).map((check) => check.id);
  it("a good probe passes every check", () => {
    expect(ids(evaluateProbe(200, new Headers(GOOD_HEADERS), JSON.stringify(GOOD_PROBE), expectations))).toEqual([]);
  });
  it("flags status, content type, cache control, versions, storage, dialogue and unknown keys", () => {
    const body = JSON.stringify({ ...GOOD_PROBE, mcp_door_version: "0.1.0", contact_storage_configured: false, dialogue_enabled: true, rows: 5 });
    const checks = evaluateProbe(503, new Headers({ "content-type": "text/html", "cache-control": "public, max-age=60" }), body, { ...expectations, dialogue: "off" });
    expect(ids(checks)).toEqual(["http_status", "content_type", "cache_control", "mcp_door_version", "contact_storage_configured", "dialogue_enabled", "known_fields"]);
    expect(checks.find((check) => check.id === "known_fields")?.actual).toEqual(["rows"]);
  });
  it("--no-expect-storage skips the storage flags; a non-JSON body fails the json check", () => {
    const body = JSON.stringify({ ...GOOD_PROBE, contact_storage_configured: false, shared_memory_storage_configured: false });
    expect(ids(evaluateProbe(200, new Headers(GOOD_HEADERS), body, { ...expectations, storage: false }))).toEqual([]);
    expect(ids(evaluateProbe(200, new Headers(GOOD_HEADERS), "<html>", expectations))).toEqual(["json"]);
  });
  it("no-store is matched as a directive", () => {
    expect(ids(evaluateProbe(200, new Headers({ ...GOOD_HEADERS, "cache-control": "private, no-store" }), JSON.stringify(GOOD_PROBE), expectations))).toEqual([]);
    expect(ids(evaluateProbe(200, new Headers({ ...GOOD_HEADERS, "cache-control": "no-storex" }), JSON.stringify(GOOD_PROBE), expectations))).toEqual(["cache_control"]);
  });
});

describe("magnt probe-check", () => {
  it("exit 0 on a good probe, with the contracts' defaults and the controlled User-Agent", async () => {
    const base = await serve(200, GOOD_HEADERS, JSON.stringify(GOOD_PROBE));
    const run = await runMagnt(["probe-check", `${base}/some/page`, "--json"]);
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout) as { url: string; ok: boolean; checks: { id: string; expected: unknown }[] };
    expect(doc.url).toBe(`${base}/__magnt_probe`);
    expect(doc.ok).toBe(true);
    expect(doc.checks.find((check) => check.id === "owner_release")?.expected).toBe(OWNER_RELEASE);
    expect(doc.checks.find((check) => check.id === "dialogue_release")?.expected).toBe(DIALOGUE_RELEASE);
    expect(seen).toEqual({ path: "/__magnt_probe", userAgent: CONTROLLED_TEST_USER_AGENT });
  });

  it("human mode prints a checks table", async () => {
    const base = await serve(200, GOOD_HEADERS, JSON.stringify(GOOD_PROBE));
    const run = await runMagnt(["probe-check", base]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("mcp_door_version");
    expect(run.stdout).toContain("known_fields");
  });

  it("exit 1 on a wrong expectation, with the document then the error line", async () => {
    const base = await serve(200, GOOD_HEADERS, JSON.stringify(GOOD_PROBE));
    const run = await runMagnt(["probe-check", base, "--expect-mcp-door-version", "9.9.9", "--expect-dialogue", "on", "--json"]);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.lines[0]!)).toMatchObject({ ok: false });
    expect(run.lastJson()).toEqual({ error: { code: "check_failed", message: "probe check failed: mcp_door_version, dialogue_enabled" } });
  });

  it("exit 1 on an unknown probe key", async () => {
    const base = await serve(200, GOOD_HEADERS, JSON.stringify({ ...GOOD_PROBE, contact_count: 3 }));
    expect((await runMagnt(["probe-check", base])).code).toBe(1);
  });

  it("--no-expect-storage accepts a door without storage", async () => {
    const base = await serve(200, GOOD_HEADERS, JSON.stringify({ ...GOOD_PROBE, contact_storage_configured: false, shared_memory_storage_configured: false }));
    expect((await runMagnt(["probe-check", base])).code).toBe(1);
    expect((await runMagnt(["probe-check", base, "--no-expect-storage"])).code).toBe(0);
  });

  it("exit 3 when unreachable", async () => {
    const run = await runMagnt(["probe-check", "http://127.0.0.1:1/", "--json"]);
    expect(run.code).toBe(3);
    expect(run.lastJson()).toEqual({ error: { code: "environment", message: expect.stringContaining("cannot reach http://127.0.0.1:1/__magnt_probe") } });
  });

  it("exit 3 on a timeout", async () => {
    server = createServer(() => undefined);
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const run = await runMagnt(["probe-check", `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, "--timeout", "100"]);
    server.closeAllConnections();
    expect(run.code).toBe(3);
  });

  it.each([["--expect-dialogue", "maybe"], ["--timeout", "soon"]])("%s %s → exit 2", async (...option) => {
    expect((await runMagnt(["probe-check", "http://127.0.0.1:1/", ...option])).code).toBe(2);
  });

  it("a missing url → exit 2", async () => {
    expect((await runMagnt(["probe-check"])).code).toBe(2);
  });
});
