/**
 * The Agent Cards (04 §1): the v1.0 rules as a schema and the v1.0 card's
 * bytes pinned; the legacy path's card as the v1.0 card plus the A2A 0.3
 * fields; URLs from PUBLIC_ORIGIN; and the document caching rules on both paths.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AGENT_CARD_VERSION } from "../../worker/contracts/versions";
import { callDoor, captureConsole, ORIGIN } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";

const CARD_PATHS = ["/.well-known/agent-card.json", "/.well-known/agent.json"] as const;

const nonEmpty = z.string().min(1);
const absoluteUrl = (origin: string) =>
  z.url().refine((url) => url.startsWith(`${origin}/`), `not built from ${origin}`);

/**
 * The A2A v1.0 AgentCard fields this door may publish (a2a.proto 1.0):
 * required fields present and non-empty, nothing from 0.3, no `kind`, no
 * extensions, security schemes or signatures. Strict objects reject any other key.
 */
function v1CardSchema(origin: string) {
  return z.strictObject({
    name: nonEmpty,
    description: nonEmpty,
    supportedInterfaces: z
      .array(
        z.strictObject({
          url: absoluteUrl(origin),
          protocolBinding: z.enum(["JSONRPC", "GRPC", "HTTP+JSON"]),
          protocolVersion: z.literal("1.0"),
        }),
      )
      .min(1),
    provider: z.strictObject({ organization: nonEmpty, url: absoluteUrl(origin) }),
    version: nonEmpty,
    documentationUrl: absoluteUrl(origin),
    capabilities: z.strictObject({
      streaming: z.literal(false),
      pushNotifications: z.literal(false),
      extendedAgentCard: z.literal(false),
    }),
    defaultInputModes: z.array(nonEmpty).min(1),
    defaultOutputModes: z.array(nonEmpty).min(1),
    skills: z
      .array(
        z.strictObject({
          id: nonEmpty,
          name: nonEmpty,
          description: nonEmpty,
          tags: z.array(nonEmpty).min(1),
          examples: z.array(nonEmpty).optional(),
        }),
      )
      .min(1),
  });
}

/** Fields of the 0.3 card (and other dialects) that a v1.0 card must not carry. */
const FORBIDDEN_FIELDS = [
  "url",
  "protocolVersion",
  "preferredTransport",
  "additionalInterfaces",
  "supportsAuthenticatedExtendedCard",
  "kind",
  "securitySchemes",
  "security",
  "securityRequirements",
  "signatures",
  "extensions",
];

function keysDeep(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysDeep);
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => [key, ...keysDeep(inner)]);
}

async function etagOf(body: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body));
  const hex = [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `"${hex.slice(0, 32)}"`;
}

async function getCard(path: string = CARD_PATHS[0], init?: RequestInit, env = {}) {
  return callDoor(path, init, env);
}

describe("Agent Card content (04 §1)", () => {
  it("follows the A2A v1.0 rules", async () => {
    const card = (await (await getCard()).json()) as Record<string, unknown>;
    v1CardSchema(ORIGIN).parse(card);
    for (const field of FORBIDDEN_FIELDS) expect(Object.keys(card), `top-level ${field}`).not.toContain(field);
    expect(keysDeep(card)).not.toContain("kind");
    expect(card.supportedInterfaces).toEqual([{ url: `${ORIGIN}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }]);
    expect(card.description).toContain(`${ORIGIN}/mcp`);
    expect(card.version).toBe("0.2.0");
  });

  it("builds every URL from PUBLIC_ORIGIN, whatever host was asked", async () => {
    const origin = "https://door.example.org";
    const response = await callDoor("https://www.magnt.ru/.well-known/agent-card.json", undefined, { PUBLIC_ORIGIN: `${origin}/` });
    const text = await response.text();
    v1CardSchema(origin).parse(JSON.parse(text));
    expect(text).not.toContain("magnt.ru");
    const card = JSON.parse(text) as { supportedInterfaces: { url: string }[] };
    expect(card.supportedInterfaces[0]!.url).toBe(`${origin}/a2a`);
  });

  it("keeps the v1.0 card byte for byte as it was before the legacy card existed", async () => {
    for (const origin of [ORIGIN, "https://door.example.org"]) {
      const response = await callDoor(`${ORIGIN}/.well-known/agent-card.json`, undefined, { PUBLIC_ORIGIN: origin });
      const body = await response.text();
      expect(body).toBe(pinnedV1Card(origin));
      expect(response.headers.get("etag")).toBe(await etagOf(body));
    }
  });
});

/**
 * The v1.0 card's bytes as served before `/.well-known/agent.json` got its own
 * card (ETag "0f1cbb8c9e3d1c608575211c9b3dcb7a" for https://magnt.ru at 0.2.0).
 * Only the origin and the release version are parameters.
 */
function pinnedV1Card(origin: string): string {
  return `{
  "name": "MAGNT",
  "description": "Public door to Alexander Redkov, a human. MAGNT's capabilities (profile, private messages for human review, shared task signals) are MCP tools at ${origin}/mcp. This A2A endpoint only returns that pointer.",
  "supportedInterfaces": [
    {
      "url": "${origin}/a2a",
      "protocolBinding": "JSONRPC",
      "protocolVersion": "1.0"
    }
  ],
  "provider": {
    "organization": "MAGNT / Alexander Redkov",
    "url": "${origin}/"
  },
  "version": "${AGENT_CARD_VERSION}",
  "documentationUrl": "${origin}/agents.md",
  "capabilities": {
    "streaming": false,
    "pushNotifications": false,
    "extendedAgentCard": false
  },
  "defaultInputModes": [
    "text/plain",
    "application/json"
  ],
  "defaultOutputModes": [
    "text/plain",
    "application/json"
  ],
  "skills": [
    {
      "id": "mcp-endpoint-discovery",
      "name": "MCP endpoint discovery",
      "description": "Answers any message with the location of MAGNT's MCP server and how to connect to it.",
      "tags": [
        "discovery",
        "mcp"
      ],
      "examples": [
        "What can you do?",
        "Where is your MCP server?"
      ]
    }
  ]
}`;
}

/**
 * The A2A 0.3 fields of the legacy card (the 0.3 AgentCard schema; what
 * `@a2a-js/sdk` 0.3.x reads: `url` for `A2AClient`, `preferredTransport` and
 * `url` for `ClientFactory`, `capabilities` for streaming and push).
 */
const V03_FIELDS = {
  protocolVersion: "0.3.0",
  url: `${ORIGIN}/a2a`,
  preferredTransport: "JSONRPC",
  supportsAuthenticatedExtendedCard: false,
} as const;

describe("legacy Agent Card at /.well-known/agent.json (04 §1)", () => {
  it("is the v1.0 card plus the 0.3 fields, 0.3 fields first", async () => {
    const v1 = (await (await getCard(CARD_PATHS[0])).json()) as Record<string, unknown>;
    const legacy = (await (await getCard(CARD_PATHS[1])).json()) as Record<string, unknown>;
    expect(legacy).toEqual({ ...v1, ...V03_FIELDS });
    expect(Object.keys(legacy)).toEqual([
      "protocolVersion",
      "name",
      "description",
      "url",
      "preferredTransport",
      ...Object.keys(v1).filter((key) => key !== "name" && key !== "description"),
      "supportsAuthenticatedExtendedCard",
    ]);
    expect(keysDeep(legacy)).not.toContain("kind");
    // The v1.0 part still passes the v1.0 rules, so a 1.x client reading this path picks the 1.0 interface.
    const v1Part = Object.fromEntries(Object.entries(legacy).filter(([key]) => !(key in V03_FIELDS)));
    v1CardSchema(ORIGIN).parse(v1Part);
  });

  it("has every field the A2A 0.3 AgentCard schema requires", async () => {
    const legacy = (await (await getCard(CARD_PATHS[1])).json()) as Record<string, unknown>;
    z.looseObject({
      protocolVersion: z.literal("0.3.0"),
      name: nonEmpty,
      description: nonEmpty,
      url: z.literal(`${ORIGIN}/a2a`),
      preferredTransport: z.literal("JSONRPC"),
      version: nonEmpty,
      capabilities: z.looseObject({ streaming: z.literal(false), pushNotifications: z.literal(false) }),
      defaultInputModes: z.array(nonEmpty).min(1),
      defaultOutputModes: z.array(nonEmpty).min(1),
      skills: z.array(z.looseObject({ id: nonEmpty, name: nonEmpty, description: nonEmpty, tags: z.array(nonEmpty).min(1) })).min(1),
    }).parse(legacy);
  });

  it("builds every URL from PUBLIC_ORIGIN, whatever host was asked", async () => {
    const origin = "https://door.example.org";
    const response = await callDoor("https://www.magnt.ru/.well-known/agent.json", undefined, { PUBLIC_ORIGIN: `${origin}/` });
    const text = await response.text();
    expect(text).not.toContain("magnt.ru");
    const card = JSON.parse(text) as { url: string; supportedInterfaces: { url: string }[] };
    expect(card.url).toBe(`${origin}/a2a`);
    expect(card.supportedInterfaces[0]!.url).toBe(`${origin}/a2a`);
  });

  it("has its own ETag, different from the v1.0 card's, with the same caching headers", async () => {
    const [v1, legacy] = await Promise.all(CARD_PATHS.map((path) => getCard(path)));
    expect(legacy!.headers.get("etag")).not.toBe(v1!.headers.get("etag"));
    for (const name of ["content-type", "cache-control", "access-control-allow-origin", "access-control-expose-headers"]) {
      expect(legacy!.headers.get(name)).toBe(v1!.headers.get(name));
    }
  });
});

describe.each(CARD_PATHS)("Agent Card at %s (04 §1)", (path) => {
  it("GET: headers, strong ETag over the body, no Last-Modified, a2a_card event", async () => {
    const logs = captureConsole();
    const response = await getCard(path);
    const body = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(response.headers.get("etag")).toBe(await etagOf(body));
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-expose-headers")).toBe("ETag");
    expect(response.headers.get("x-magnt-observer")).toBe("1");
    expect(response.headers.get("last-modified")).toBeNull();
    const events = logs.events();
    expect(events).toHaveLength(1);
    assertValidEvent(events[0]);
    expect(events[0]).toMatchObject({ event_type: "a2a_card", outcome: "http_success", status: 200, path });
  });

  it.each([
    ["the exact tag", (etag: string) => etag],
    ["a weak copy", (etag: string) => `W/${etag}`],
    ["a list containing it", (etag: string) => `"0000", ${etag}`],
    ["*", () => "*"],
  ])("If-None-Match with %s is 304 without body", async (_label, header) => {
    const etag = (await getCard(path)).headers.get("etag")!;
    const logs = captureConsole();
    const response = await getCard(path, { headers: { "If-None-Match": header(etag) } });
    expect(response.status).toBe(304);
    expect(await response.text()).toBe("");
    expect(response.headers.get("etag")).toBe(etag);
    expect(response.headers.get("cache-control")).toBe("public, max-age=3600");
    const events = logs.events();
    expect(events).toHaveLength(1);
    assertValidEvent(events[0]);
    expect(events[0]).toMatchObject({ event_type: "a2a_card", outcome: "not_modified", status: 304 });
  });

  it("If-None-Match with another tag is a full 200", async () => {
    const response = await getCard(path, { headers: { "If-None-Match": '"0123456789abcdef0123456789abcdef"' } });
    expect(response.status).toBe(200);
    expect((await response.text()).length).toBeGreaterThan(0);
  });

  it("HEAD: the GET headers without a body", async () => {
    const get = await getCard(path);
    const head = await getCard(path, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    for (const name of ["content-type", "etag", "cache-control", "access-control-allow-origin", "access-control-expose-headers"]) {
      expect(head.headers.get(name)).toBe(get.headers.get(name));
    }
  });

  it("OPTIONS: 204 preflight allowing A2A-Version", async () => {
    const logs = captureConsole();
    const response = await getCard(path, {
      method: "OPTIONS",
      headers: { Origin: "https://agent.example", "Access-Control-Request-Headers": "a2a-version" },
    });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-methods")).toBe("GET, HEAD, OPTIONS");
    expect(response.headers.get("access-control-allow-headers")).toBe("Content-Type, If-None-Match, A2A-Version");
    expect(logs.events()[0]).toMatchObject({ event_type: "a2a_card", status: 204 });
  });

  it.each(["POST", "PUT", "DELETE", "PATCH"])("%s is 405", async (method) => {
    const logs = captureConsole();
    const response = await getCard(path, { method, ...(method === "POST" ? { body: "{}" } : {}) });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    const events = logs.events();
    expect(events).toHaveLength(1);
    assertValidEvent(events[0]);
    expect(events[0]).toMatchObject({ event_type: "a2a_card", outcome: "method_not_allowed" });
  });
});

describe("MCP Server Card still served by the shared document helper", () => {
  it("keeps its own caching and preflight", async () => {
    const response = await callDoor("/mcp/server-card", { method: "OPTIONS" });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-headers")).toBe("Content-Type, If-None-Match");
    const card = await callDoor("/mcp/server-card");
    expect(card.headers.get("cache-control")).toBe("public, max-age=300");
  });
});
