/**
 * The Server Card against the official JSON Schema (draft 2020-12, validated with
 * Ajv in Node, because workerd forbids the code generation Ajv relies on) and
 * against the constraints of 02 §6, plus the AI catalog and the registry entry.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { buildAiCatalog, buildServerCard, SERVER_CARD_SCHEMA_URL } from "../../worker/mcp/server-card";
import { MCP_SUPPORTED_PROTOCOL_VERSIONS } from "../../worker/contracts/versions";

const FIXTURES = join(import.meta.dirname, "../fixtures/server-card");
const schema = JSON.parse(readFileSync(join(FIXTURES, "schema.json"), "utf8"));

function cardValidator() {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(schema, "server-card");
  return ajv.compile({ $ref: "server-card#/$defs/ServerCard" });
}

describe("Server Card (02 §6)", () => {
  const validate = cardValidator();

  it("the validator accepts the official valid examples and rejects the invalid ones", () => {
    for (const kind of ["valid", "invalid"] as const) {
      for (const file of readdirSync(join(FIXTURES, "examples", kind))) {
        const example = JSON.parse(readFileSync(join(FIXTURES, "examples", kind, file), "utf8"));
        expect(validate(example), `${kind}/${file}`).toBe(kind === "valid");
      }
    }
  });

  it.each(["https://magnt.ru", "http://localhost:8787"])("the card built for %s validates against the official schema", (origin) => {
    const card = buildServerCard(origin);
    expect(validate(card), JSON.stringify(validate.errors)).toBe(true);
  });

  it("meets every constraint of 02 §6", () => {
    const card = buildServerCard("https://magnt.ru");
    for (const key of ["$schema", "name", "version", "description"] as const) expect(card[key]).toBeTruthy();
    expect(card.$schema).toBe(SERVER_CARD_SCHEMA_URL);
    expect(card.$schema).not.toMatch(/\d{4}-\d{2}-\d{2}/);
    expect(card.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(card.name.length).toBeGreaterThanOrEqual(3);
    expect(card.name.length).toBeLessThanOrEqual(200);
    expect(card.description.length).toBeGreaterThanOrEqual(1);
    expect(card.description.length).toBeLessThanOrEqual(100);
    expect(card.title.length).toBeLessThanOrEqual(100);
    expect(card.remotes).toHaveLength(1);
    expect(card.remotes[0]!.type).toBe("streamable-http");
    expect(new URL(card.remotes[0]!.url).href).toBe("https://magnt.ru/mcp");
    expect(card.remotes[0]!.supportedProtocolVersions).toEqual(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]);
    expect(card.remotes[0]!.supportedProtocolVersions).toEqual([...MCP_SUPPORTED_PROTOCOL_VERSIONS]);
    expect(card).not.toHaveProperty("tools");
    expect(card).not.toHaveProperty("skills");
    expect(card.websiteUrl).toBe("https://magnt.ru/");
  });

  it("the AI catalog points to the card under its own media type", () => {
    expect(buildAiCatalog("https://magnt.ru")).toEqual({
      specVersion: "draft",
      entries: [
        {
          identifier: "urn:air:magnt.ru:mcp-door",
          displayName: "MAGNT MCP Door",
          type: "application/mcp-server-card+json",
          url: "https://magnt.ru/mcp/server-card",
        },
      ],
    });
  });
});

describe("MCP Registry entry (02 §8)", () => {
  const entry = JSON.parse(readFileSync(join(import.meta.dirname, "../../docs/registry/server.json"), "utf8"));

  it("agrees with the Server Card on name, title, version and repository", () => {
    const card = buildServerCard("https://magnt.ru");
    expect(entry.$schema).toBe("https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json");
    expect(entry.name).toBe(card.name);
    expect(entry.title).toBe(card.title);
    expect(entry.version).toBe(card.version);
    expect(entry.websiteUrl).toBe("https://magnt.ru/");
    expect(entry.repository).toEqual(card.repository);
    expect(entry.remotes).toEqual([{ type: "streamable-http", url: "https://magnt.ru/mcp" }]);
  });
});
