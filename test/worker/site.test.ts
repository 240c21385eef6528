/**
 * The static proxy, the built-in offline page and the probe (01 §6–§7).
 */
import { describe, expect, it, vi } from "vitest";
import { callDoor, captureConsole } from "../helpers/door";
import { SITE_BASE_PATH, SITE_HOST, useSiteOrigin, useUnreachableSiteOrigin } from "../fakes/site-origin";
import { modernRequest, rawPost, readMessages } from "../helpers/mcp";
import pkg from "../../package.json";

describe("static proxy (01 §6)", () => {
  it.each([
    ["/", "/index.html", "text/html; charset=utf-8"],
    ["/index.html", "/index.html", "text/html; charset=utf-8"],
    ["/docs/", "/docs/index.html", "text/html; charset=utf-8"],
    ["/style.CSS", "/style.CSS", "text/css; charset=utf-8"],
    ["/app.js", "/app.js", "text/javascript; charset=utf-8"],
    ["/mod.mjs", "/mod.mjs", "text/javascript; charset=utf-8"],
    ["/data.json", "/data.json", "application/json; charset=utf-8"],
    ["/robots.txt", "/robots.txt", "text/plain; charset=utf-8"],
    ["/agents.md", "/agents.md", "text/markdown; charset=utf-8"],
    ["/sitemap.xml", "/sitemap.xml", "application/xml; charset=utf-8"],
    ["/logo.svg", "/logo.svg", "image/svg+xml"],
    ["/logo.png", "/logo.png", "image/png"],
    ["/photo.jpg", "/photo.jpg", "image/jpeg"],
    ["/photo.JPEG", "/photo.JPEG", "image/jpeg"],
    ["/photo.webp", "/photo.webp", "image/webp"],
    ["/favicon.ico", "/favicon.ico", "image/x-icon"],
    ["/archive.zip", "/archive.zip", "application/x-upstream"],
    ["/hello%20world.txt", "/hello%20world.txt", "text/plain; charset=utf-8"],
  ])("maps %s to %s with %s", async (path, upstreamPath, contentType) => {
    const site = useSiteOrigin({
      [decodeURIComponent(upstreamPath)]: { body: "content", headers: { "content-type": "application/x-upstream" } },
      [upstreamPath]: { body: "content", headers: { "content-type": "application/x-upstream" } },
    });
    const response = await callDoor(`${path}?secret=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(contentType);
    expect(response.headers.get("x-magnt-origin")).toBe("github-raw");
    expect(response.headers.get("x-magnt-observer")).toBe("1");
    expect(await response.text()).toBe("content");
    expect(site.requests).toHaveLength(1);
    const upstream = site.requests[0]!;
    expect(upstream.url).toBe(`https://raw.githubusercontent.com${SITE_BASE_PATH}${upstreamPath}`);
    expect(new URL(upstream.url).search).toBe("");
  });

  it("sends only the origin User-Agent and Accept upstream", async () => {
    const site = useSiteOrigin({ "/index.html": { body: "x" } });
    await callDoor("/", { headers: { "user-agent": "curl/8", accept: "text/html", cookie: "a=b", authorization: "Bearer x" } });
    const headers = Object.fromEntries(site.requests[0]!.headers);
    expect(headers["user-agent"]).toBe("MAGNT-Origin-Fetch/1.0");
    expect(headers.accept).toBe("text/html");
    expect(headers.cookie).toBeUndefined();
    expect(headers.authorization).toBeUndefined();
    await callDoor("/");
    expect(site.requests[1]!.headers.get("accept")).toBe("*/*");
  });

  it("removes content-disposition, x-content-type-options and set-cookie and keeps the rest", async () => {
    useSiteOrigin({
      "/a.txt": {
        body: "x",
        headers: {
          "content-disposition": "attachment",
          "x-content-type-options": "nosniff",
          "set-cookie": "a=b",
          "cache-control": "max-age=300",
          etag: '"abc"',
        },
      },
    });
    const response = await callDoor("/a.txt");
    expect(response.headers.get("content-disposition")).toBeNull();
    expect(response.headers.get("x-content-type-options")).toBeNull();
    expect(response.headers.get("set-cookie")).toBeNull();
    expect(response.headers.get("cache-control")).toBe("max-age=300");
    expect(response.headers.get("etag")).toBe('"abc"');
  });

  it("passes upstream 404, 5xx and 3xx through unchanged and does not follow redirects", async () => {
    const site = useSiteOrigin({
      "/gone.html": { body: "gone", status: 500 },
      "/moved.html": { body: "", status: 302, headers: { location: "https://elsewhere.example/x" } },
    });
    expect((await callDoor("/missing.html")).status).toBe(404);
    expect((await callDoor("/gone.html")).status).toBe(500);
    const moved = await callDoor("/moved.html");
    expect(moved.status).toBe(302);
    expect(moved.headers.get("location")).toBe("https://elsewhere.example/x");
    expect(site.requests.map((request) => request.redirect)).toEqual(["manual", "manual", "manual"]);
  });

  it("answers HEAD with headers only", async () => {
    useSiteOrigin({ "/index.html": { body: "<h1>x</h1>" } });
    const response = await callDoor("/", { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await response.text()).toBe("");
  });

  // Plain dot segments ("/../x", "/%2e%2e/x") are resolved by the URL parser before the Worker sees them;
  // these are the forms that survive parsing and decode to something dangerous.
  it.each(["/a/%2E%2E%2Fetc/passwd", "/a/..%2fb", "/a..b", "/a%5cb", "/a%00b", "/a%0ab", "/a%7f", "/%E0%A4%A"])(
    "refuses %s with 400 and makes no request",
    async (path) => {
      const site = useSiteOrigin({});
      const logs = captureConsole();
      const response = await callDoor(new Request(`https://magnt.ru${path}`));
      expect(response.status).toBe(400);
      expect(await response.text()).toBe("Bad Request");
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(site.requests).toHaveLength(0);
      expect(logs.events()[0]?.outcome).toBe("bad_request");
    },
  );

  it("answers 503 origin_unavailable when the origin cannot be reached, without the network error text", async () => {
    useUnreachableSiteOrigin();
    const logs = captureConsole();
    const response = await callDoor("/");
    expect(response.status).toBe(503);
    expect(await response.text()).toBe("Service temporarily unavailable");
    expect(logs.events()[0]?.outcome).toBe("origin_unavailable");
    expect(logs.lines().join("\n")).not.toContain("CANARY-network-error-text");
  });
});

describe("built-in offline page (01 §6.1)", () => {
  const offline = { SITE_ORIGIN: "" };

  it("serves a self-contained page listing the door's URLs and versions, making no request", async () => {
    const response = await callDoor("/", undefined, offline);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-magnt-origin")).toBe("builtin");
    const html = await response.text();
    expect(html).toContain("<title>MAGNT MCP Door (local)</title>");
    for (const path of ["/mcp", "/mcp/server-card", "/.well-known/ai-catalog.json", "/.well-known/agent-card.json", "/a2a", "/__magnt_probe"]) {
      expect(html).toContain(`https://magnt.ru${path}`);
    }
    expect(html).toContain("0.2.0");
    expect(html).not.toMatch(/<script|<link|src=/i);
  });

  it("builds the URLs from PUBLIC_ORIGIN", async () => {
    const html = await (await callDoor("/index.html", undefined, { ...offline, PUBLIC_ORIGIN: "http://localhost:9999" })).text();
    expect(html).toContain("http://localhost:9999/mcp");
  });

  it("answers HEAD with headers only and every other path with 404", async () => {
    const head = await callDoor("/", { method: "HEAD" }, offline);
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const other = await callDoor("/other.html", undefined, offline);
    expect(other.status).toBe(404);
    expect(await other.text()).toBe("Not found");
    expect(other.headers.get("x-magnt-origin")).toBe("builtin");
  });
});

describe("probe (01 §7)", () => {
  const FIELDS = [
    "ok", "service", "role", "mcp_door_version", "shared_memory_version", "owner_release", "dialogue_release",
    "dialogue_enabled", "contact_storage_configured", "shared_memory_storage_configured", "origin", "time",
    "host", "path", "clientKind", "clientName", "country", "colo",
  ];

  it("reports versions and binding flags, pretty-printed, no-store", async () => {
    const response = await callDoor("/__magnt_probe", { headers: { "user-agent": "curl/8.5" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-store");
    const text = await response.text();
    expect(text).toContain('\n  "ok": true');
    const probe = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(probe).sort()).toEqual([...FIELDS].sort());
    expect(probe).toMatchObject({
      ok: true,
      service: "magnt-observer",
      role: "monolith",
      mcp_door_version: "0.2.0",
      shared_memory_version: "0.2.0",
      owner_release: "B.1",
      dialogue_release: "C.1",
      dialogue_enabled: false,
      contact_storage_configured: true,
      shared_memory_storage_configured: true,
      origin: "raw.githubusercontent.com/redkov-dev/cortex/main",
      host: "magnt.ru",
      path: "/__magnt_probe",
      clientKind: "bot",
      clientName: "curl",
      country: "",
      colo: "",
    });
    expect(new Date(String(probe.time)).toISOString()).toBe(probe.time);
  });

  it("reports builtin and missing storage exactly, and storage as configured when bound", async () => {
    const unbound = await (
      await callDoor("/__magnt_probe", undefined, { SITE_ORIGIN: "", CONTACTS: undefined })
    ).json<Record<string, unknown>>();
    expect(unbound).toMatchObject({
      origin: "builtin",
      contact_storage_configured: false,
      shared_memory_storage_configured: false,
      dialogue_enabled: false,
    });
    const bound = await (await callDoor("/__magnt_probe")).json<Record<string, unknown>>();
    expect(bound).toMatchObject({ contact_storage_configured: true, shared_memory_storage_configured: true });
  });

  it("reports the dialogue exactly when fetch_contact_reply is registered (DIALOGUE_ENABLED exactly \"true\")", async () => {
    for (const [value, served] of [["true", true], ["TRUE", false], [" true", false], ["false", false], [undefined, false]] as const) {
      const probe = await (await callDoor("/__magnt_probe", undefined, { DIALOGUE_ENABLED: value })).json<Record<string, unknown>>();
      expect(probe.dialogue_enabled, String(value)).toBe(served);
    }
  });

  it("answers HEAD with the headers and no body", async () => {
    const response = await callDoor("/__magnt_probe", { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await response.text()).toBe("");
  });
});

describe("served versions agree with package.json (10 §7)", () => {
  // package.json is read as data, not through worker/contracts/versions.ts, so a
  // document or header that drifts from the release fails here.
  const release = pkg.version;

  it("the probe, the MCP server info and header, the Server Card and the Agent Card all report it", async () => {
    expect(release).toMatch(/^\d+\.\d+\.\d+$/);

    const probe = await (await callDoor("/__magnt_probe")).json<Record<string, unknown>>();
    expect({ door: probe.mcp_door_version, memory: probe.shared_memory_version }).toEqual({ door: release, memory: release });

    const initialize = await rawPost(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "versions", version: "1" } },
      }),
      { "mcp-protocol-version": "2025-11-25" },
    );
    expect(initialize.headers.get("x-magnt-mcp-version")).toBe(release);
    const [initialized] = await readMessages(initialize);
    expect((initialized!.result as { serverInfo: { version: string } }).serverInfo.version).toBe(release);

    const discover = await modernRequest("server/discover");
    expect(discover.headers.get("x-magnt-mcp-version")).toBe(release);
    const [discovered] = await readMessages(discover);
    const serverInfo = (discovered!.result as { _meta: Record<string, { version: string }> })._meta["io.modelcontextprotocol/serverInfo"];
    expect(serverInfo!.version).toBe(release);

    for (const path of ["/mcp/server-card", "/.well-known/mcp/server-card.json"]) {
      const card = await (await callDoor(path)).json<{ version: string }>();
      expect(card.version, path).toBe(release);
    }
    for (const path of ["/.well-known/agent-card.json", "/.well-known/agent.json"]) {
      const card = await (await callDoor(path)).json<{ version: string }>();
      expect(card.version, path).toBe(release);
    }
  });
});

describe("static proxy cache options (01 §6)", () => {
  /** The `init` of every outbound `fetch` the door made to the site origin (the network guard spies on `fetch`). */
  function originFetchInits(): RequestInit[] {
    return vi
      .mocked(globalThis.fetch)
      .mock.calls.filter(([input]) => new URL(input instanceof Request ? input.url : String(input)).host === SITE_HOST)
      .map(([, init]) => init ?? {});
  }

  it.each(["GET", "HEAD"])("%s asks Cloudflare to cache everything for 60 s and not to follow redirects", async (method) => {
    useSiteOrigin({ "/index.html": { body: "x" } });
    expect((await callDoor("/", { method })).status).toBe(200);
    const inits = originFetchInits();
    expect(inits).toHaveLength(1);
    expect(inits[0]).toMatchObject({ method, redirect: "manual" });
    expect((inits[0] as RequestInit & { cf?: unknown }).cf).toEqual({ cacheEverything: true, cacheTtl: 60 });
  });
});
