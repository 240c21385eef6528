/**
 * Public discovery (02 §3–§7) with both official client generations: the exact
 * tool list, annotations and strict schemas, the profile resource equal to
 * about_magnt, the Server Card and AI catalog as served, and the absence of
 * any owner surface.
 */
import { describe, expect, it } from "vitest";
import { DIALOGUE_TOOL_NAMES, OWNER_TOOL_NAMES, PUBLIC_TOOL_NAMES } from "../../worker/contracts/tools";
import { buildAiCatalog, buildServerCard } from "../../worker/mcp/server-card";
import { callDoor, captureConsole } from "../helpers/door";
import { connectV1, connectV2, modernRequest, readMessages, type V2Mode } from "../helpers/mcp";

const EXPECTED_ANNOTATIONS = {
  about_magnt: { title: "Learn about MAGNT", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  propose_contact: { title: "Leave a message for Alexander", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  search_shared_experience: { title: "Search shared task signals", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  contribute_task_signal: { title: "Share a task signal", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
};

const V2_MODES: [string, V2Mode, string][] = [
  ["default (legacy)", "legacy", "2025-11-25"],
  ["auto", "auto", "2026-07-28"],
  ["pinned 2026-07-28", { pin: "2026-07-28" }, "2026-07-28"],
];

describe.each(V2_MODES)("@modelcontextprotocol/client 2.4.0, %s", (_label, mode, version) => {
  it("negotiates the expected revision and lists exactly the public tools, strict, annotated", async () => {
    const client = await connectV2(mode);
    expect(client.getNegotiatedProtocolVersion()).toBe(version);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([...PUBLIC_TOOL_NAMES]);
    for (const tool of tools) {
      expect(tool.annotations).toEqual(EXPECTED_ANNOTATIONS[tool.name as keyof typeof EXPECTED_ANNOTATIONS]);
      expect(tool.inputSchema.additionalProperties).toBe(false);
      expect(tool.outputSchema).toBeUndefined();
    }
    const propose = tools.find((tool) => tool.name === "propose_contact")!;
    expect(propose.inputSchema.required).toEqual(["summary"]);
    expect(Object.keys(propose.inputSchema.properties ?? {})).toEqual([
      "summary", "intent", "what_you_need_from_human", "agent_identity", "operator", "reply_to", "found_via",
      "previous_contact_id", "submission_id", "is_test",
    ]);
    await client.close();
  });

  it("reads magnt://profile, deep-equal to about_magnt", async () => {
    const client = await connectV2(mode);
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(["magnt://profile"]);
    expect(resources[0]).toMatchObject({ name: "magnt-profile", title: "Alexander Redkov and MAGNT", mimeType: "application/json" });
    const read = await client.readResource({ uri: "magnt://profile" });
    expect(read.contents).toHaveLength(1);
    expect(read.contents[0]).toMatchObject({ uri: "magnt://profile", mimeType: "application/json" });
    const profile = JSON.parse((read.contents[0] as { text: string }).text);
    const about = await client.callTool({ name: "about_magnt", arguments: {} });
    expect(about.isError).toBeFalsy();
    expect(about.structuredContent).toEqual(profile);
    expect(JSON.parse((about.content as { text: string }[])[0]!.text)).toEqual(profile);
    await client.close();
  });
});

describe("@modelcontextprotocol/sdk 1.32.2 (2025 generation)", () => {
  it("initializes on 2025-11-25, lists the public tools and reads the profile", async () => {
    const client = await connectV1();
    expect(client.getServerVersion()).toMatchObject({ name: "ru.magnt/mcp-door", version: "0.2.0", title: "MAGNT MCP Door" });
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: false }, resources: { listChanged: false } });
    expect(client.getInstructions()).toContain("Alexander Redkov");
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([...PUBLIC_TOOL_NAMES]);
    const read = await client.readResource({ uri: "magnt://profile" });
    const about = await client.callTool({ name: "about_magnt", arguments: {} });
    expect(about.structuredContent).toEqual(JSON.parse((read.contents[0] as { text: string }).text));
    await client.close();
  });
});

describe("profile (02 §4)", () => {
  it("has exactly the specified keys and fixed values", async () => {
    const client = await connectV2("auto");
    const profile = (await client.callTool({ name: "about_magnt", arguments: {} })).structuredContent as Record<string, any>;
    expect(Object.keys(profile)).toEqual([
      "name", "beacon", "canonical_url", "human", "purpose", "capabilities", "invitations", "contact", "authority",
      "privacy", "identity", "protocols",
    ]);
    expect(profile).toMatchObject({
      name: "MAGNT",
      beacon: "REDKOV-AI-2026",
      canonical_url: "https://magnt.ru/",
      human: { name: "Alexander Redkov", public_identity: "https://x.com/redkov" },
      contact: {
        mcp: "https://magnt.ru/mcp",
        tool: "propose_contact",
        storage_available: true,
        email: "agents@magnt.ru",
        public_backup: "https://github.com/redkov-dev/cortex/issues",
      },
      protocols: { mcp: "available", a2a: "discovery bridge" },
    });
    expect(profile.capabilities).toHaveLength(5);
    expect(profile.invitations).toHaveLength(4);
    expect(Object.keys(profile.authority)).toEqual(["gateway", "commitments"]);
    expect(typeof profile.contact.reply).toBe("string");
    await client.close();
  });

  it("reports storage_available from the binding, per request", async () => {
    const client = await connectV2("auto", { CONTACTS: undefined });
    const profile = (await client.callTool({ name: "about_magnt", arguments: {} })).structuredContent as Record<string, any>;
    expect(profile.contact.storage_available).toBe(false);
    await client.close();
  });

  it("about_magnt creates no message", async () => {
    const { env } = await import("cloudflare:workers");
    const before = await env.CONTACTS!.prepare("SELECT COUNT(*) AS n FROM contacts").first<{ n: number }>();
    await modernRequest("tools/call", { name: "about_magnt", arguments: {} });
    const after = await env.CONTACTS!.prepare("SELECT COUNT(*) AS n FROM contacts").first<{ n: number }>();
    expect(after!.n).toBe(before!.n);
  });
});

describe("Server Card and AI catalog as served (02 §6–§7)", () => {
  const CARD_PATHS = [
    ["/mcp/server-card", "application/mcp-server-card+json"],
    ["/.well-known/mcp/server-card.json", "application/json"],
  ] as const;

  it("serves the card with identical bytes at both paths, built from PUBLIC_ORIGIN", async () => {
    const bodies: string[] = [];
    for (const [path, contentType] of CARD_PATHS) {
      const response = await callDoor(path);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe(contentType);
      expect(response.headers.get("cache-control")).toBe("public, max-age=300");
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(response.headers.get("access-control-expose-headers")).toBe("ETag");
      expect(response.headers.get("x-magnt-observer")).toBe("1");
      bodies.push(await response.text());
    }
    expect(bodies[0]).toBe(bodies[1]);
    expect(JSON.parse(bodies[0]!)).toEqual(buildServerCard("https://magnt.ru"));
    const local = await (await callDoor("/mcp/server-card", undefined, { PUBLIC_ORIGIN: "http://localhost:9000" })).json<Record<string, any>>();
    expect(local.remotes[0].url).toBe("http://localhost:9000/mcp");
  });

  it("has an ETag of the first 32 hex chars of the body's SHA-256, with 304, HEAD and OPTIONS", async () => {
    for (const path of ["/mcp/server-card", "/.well-known/mcp/server-card.json", "/.well-known/ai-catalog.json"]) {
      const response = await callDoor(path);
      const body = await response.text();
      const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body));
      const hex = [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
      const etag = `"${hex.slice(0, 32)}"`;
      expect(response.headers.get("etag")).toBe(etag);

      const logs = captureConsole();
      for (const ifNoneMatch of [etag, `W/${etag}`, "*", `"other", ${etag}`]) {
        const notModified = await callDoor(path, { headers: { "if-none-match": ifNoneMatch } });
        expect(notModified.status, ifNoneMatch).toBe(304);
        expect(await notModified.text()).toBe("");
        expect(notModified.headers.get("etag")).toBe(etag);
        expect(notModified.headers.get("cache-control")).toBe("public, max-age=300");
      }
      expect(logs.events().every((event) => event.outcome === "not_modified" && event.event_type === "mcp_card")).toBe(true);
      expect((await callDoor(path, { headers: { "if-none-match": '"stale"' } })).status).toBe(200);

      const head = await callDoor(path, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(head.headers.get("etag")).toBe(etag);
      expect(await head.text()).toBe("");

      const options = await callDoor(path, { method: "OPTIONS" });
      expect(options.status).toBe(204);
      expect(Object.fromEntries(options.headers)).toMatchObject({
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET, HEAD, OPTIONS",
        "access-control-allow-headers": "Content-Type, If-None-Match",
        "access-control-max-age": "86400",
      });
      expect((await callDoor(path, { method: "POST", body: "{}" })).status).toBe(405);
    }
  });

  it("serves the AI catalog pointing to the card", async () => {
    const response = await callDoor("/.well-known/ai-catalog.json");
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual(buildAiCatalog("https://magnt.ru"));
  });

  it("agrees with server/discover and initialize on name, version and protocol versions", async () => {
    const card = buildServerCard("https://magnt.ru");
    const [discover] = await readMessages(await modernRequest("server/discover"));
    const result = discover!.result as Record<string, any>;
    const info = result._meta["io.modelcontextprotocol/serverInfo"];
    expect(info.name).toBe(card.name);
    expect(info.version).toBe(card.version);
    expect(card.remotes[0]!.supportedProtocolVersions).toEqual(expect.arrayContaining(result.supportedVersions));
    const client = await connectV1();
    expect(client.getServerVersion()).toMatchObject({ name: card.name, version: card.version });
    await client.close();
  });
});

describe("no owner surface on the public door (06 §1)", () => {
  it("never lists or mentions an owner tool or the owner host", async () => {
    const client = await connectV2("auto");
    const { tools } = await client.listTools();
    const surface = JSON.stringify(tools) + (await (await callDoor("/mcp/server-card")).text()) + (await (await callDoor("/__magnt_probe")).text());
    for (const name of OWNER_TOOL_NAMES) expect(surface).not.toContain(name);
    expect(surface).not.toContain("owner.magnt.ru");
    expect(tools.some((tool) => tool.name.startsWith("owner_"))).toBe(false);
    await client.close();
  });
});

describe("DIALOGUE_ENABLED (07 §1, 01 §7, 02 §2, §4): tools/list, instructions, profile and probe agree", () => {
  it("lists fetch_contact_reply last and the dialogue_token field, and every text and the probe advertise it", async () => {
    const overrides = { DIALOGUE_ENABLED: "true", DIALOGUE_TOKEN_KEY: "A".repeat(43) };
    for (const client of [await connectV2("auto", overrides), await connectV1(overrides)]) {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([...PUBLIC_TOOL_NAMES, ...DIALOGUE_TOOL_NAMES]);
      const fetchTool = tools.find((tool) => tool.name === "fetch_contact_reply")!;
      expect(fetchTool.annotations).toEqual({
        title: "Fetch a reply to your message", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false,
      });
      expect(fetchTool.title).toBe("Fetch a reply to your message");
      expect(fetchTool.inputSchema.additionalProperties).toBe(false);
      expect(fetchTool.inputSchema.required).toEqual(["contact_id", "dialogue_token"]);
      expect(Object.keys(fetchTool.inputSchema.properties ?? {})).toEqual(["contact_id", "dialogue_token", "reply_id"]);
      const propose = tools.find((tool) => tool.name === "propose_contact")!;
      expect(propose.inputSchema.additionalProperties).toBe(false);
      expect(propose.inputSchema.required).toEqual(["summary"]);
      expect(Object.keys(propose.inputSchema.properties ?? {})).toEqual([
        "summary", "intent", "what_you_need_from_human", "agent_identity", "operator", "reply_to", "found_via",
        "previous_contact_id", "submission_id", "is_test", "dialogue_token",
      ]);
      expect(client.getInstructions() ?? "").toContain("fetch_contact_reply");
      const read = await client.readResource({ uri: "magnt://profile" });
      expect((read.contents[0] as { text: string }).text).toContain("fetch_contact_reply");
      const about = await client.callTool({ name: "about_magnt", arguments: {} });
      expect(JSON.stringify(about.structuredContent)).toContain("fetch_contact_reply");
      await client.close();
    }
    const probe = await (await callDoor("/__magnt_probe", undefined, overrides)).json<Record<string, unknown>>();
    expect(probe.dialogue_enabled).toBe(true);
    const surface = (await (await callDoor("/mcp/server-card", undefined, overrides)).text()) + JSON.stringify(probe);
    for (const name of OWNER_TOOL_NAMES) expect(surface).not.toContain(name);
  });

  it.each(["TRUE", " true", "1", "yes", "", undefined])(
    "DIALOGUE_ENABLED=%j is off: tools/list, instructions, profile and probe are byte-identical to the flag being absent",
    async (value) => {
      const snapshot = async (overrides: Record<string, unknown>) => {
        const [list] = await readMessages(await modernRequest("tools/list", {}, { overrides }));
        const [profile] = await readMessages(await modernRequest("resources/read", { uri: "magnt://profile" }, { overrides }));
        const client = await connectV1(overrides);
        const instructions = client.getInstructions();
        await client.close();
        const probe = await (await callDoor("/__magnt_probe", undefined, overrides)).json<Record<string, unknown>>();
        delete probe.time;
        return { list: JSON.stringify(list!.result), profile: JSON.stringify(profile!.result), instructions, probe: JSON.stringify(probe) };
      };
      const off = await snapshot({ DIALOGUE_TOKEN_KEY: "A".repeat(43) });
      const flagged = await snapshot({ DIALOGUE_ENABLED: value, DIALOGUE_TOKEN_KEY: "A".repeat(43) });
      expect(flagged).toEqual(off);
      expect(off.list).not.toContain("fetch_contact_reply");
      expect(off.list).not.toContain("dialogue_token");
      expect(off.instructions ?? "").not.toContain("fetch_contact_reply");
      expect(off.profile).not.toContain("fetch_contact_reply");
      expect(JSON.parse(off.probe).dialogue_enabled).toBe(false);
    },
  );
});
