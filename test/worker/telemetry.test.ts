/**
 * The telemetry event (01 §9–§10): field rules, sanitising, the User-Agent
 * classifier, sensitive-path redaction and the edge privacy canary.
 */
import { describe, expect, it } from "vitest";
import { callDoor, captureConsole } from "../helpers/door";
import { assertValidEvent } from "../helpers/event-schema";
import { Canaries } from "../helpers/privacy";
import { useSiteOrigin } from "../fakes/site-origin";
import { classifyUserAgent } from "../../worker/edge/ua";
import { sanitizeText, truncateCodePoints, parseStrictInteger } from "../../worker/edge/sanitize";
import { isSensitivePath } from "../../worker/edge/telemetry";

describe("User-Agent classifier (01 §10)", () => {
  it.each([
    ["Mozilla/5.0 (compatible; GPTBot/1.2)", "bot", "GPTBot"],
    ["Mozilla/5.0 ChatGPT-User/1.0", "bot", "ChatGPT-User"],
    ["OAI-SearchBot/1.0", "bot", "OAI-SearchBot"],
    ["ClaudeBot/1.0", "bot", "ClaudeBot"],
    ["Claude-Web/1.0", "bot", "Claude-Web"],
    ["anthropic-ai", "bot", "Anthropic"],
    ["PerplexityBot/1.0", "bot", "PerplexityBot"],
    ["Googlebot/2.1", "bot", "Googlebot"],
    ["bingbot/2.0", "bot", "Bingbot"],
    ["YandexBot/3.0", "bot", "YandexBot"],
    ["DuckDuckBot/1.1", "bot", "DuckDuckBot"],
    ["Bytespider", "bot", "ByteSpider"],
    ["facebookexternalhit/1.1", "bot", "Facebook"],
    ["Twitterbot/1.0", "bot", "Twitterbot"],
    ["LinkedInBot/1.0", "bot", "LinkedInBot"],
    ["curl/8.5.0", "bot", "curl"],
    ["Wget/1.21", "bot", "wget"],
    ["python-requests/2.31", "bot", "python-requests"],
    ["python-httpx/0.27", "bot", "python-httpx"],
    ["GPTBot and Googlebot", "bot", "GPTBot"],
    ["SomeBot/1.0", "probable-bot", "unidentified"],
    ["my-crawler", "probable-bot", "unidentified"],
    ["Spider", "probable-bot", "unidentified"],
    ["scraper 1", "probable-bot", "unidentified"],
    ["HeadlessChrome/120", "probable-bot", "unidentified"],
    ["Apache-HttpClient/4.5", "probable-bot", "unidentified"],
    ["aiohttp/3.9", "probable-bot", "unidentified"],
    ["okhttp/4.12", "probable-bot", "unidentified"],
    ["Go-http-client/2.0", "probable-bot", "unidentified"],
    ["Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0", "browser-or-unknown", "unknown"],
    ["", "browser-or-unknown", "unknown"],
    ["curl", "browser-or-unknown", "unknown"],
  ])("%s → %s / %s", (userAgent, clientKind, clientName) => {
    expect(classifyUserAgent(userAgent)).toEqual({ clientKind, clientName });
  });
});

describe("sanitising (01 §9.5)", () => {
  it("removes control characters, C1 controls and line separators", () => {
    expect(sanitizeText("a\u0000b\u001fc\u007fd\u0085e\u009ff\u2028g\u2029h\ni\tj", 100)).toBe("abcdefghij");
  });
  it("makes non-strings null", () => {
    expect(sanitizeText(42, 10)).toBeNull();
    expect(sanitizeText(undefined, 10)).toBeNull();
    expect(sanitizeText({ name: "x" }, 10)).toBeNull();
  });
  it("cuts by code points and never splits a surrogate pair", () => {
    expect(truncateCodePoints("😀😀😀", 2)).toBe("😀😀");
    expect(truncateCodePoints("a😀b", 2)).toBe("a😀");
    expect(truncateCodePoints("abc", 5)).toBe("abc");
    const cut = truncateCodePoints("x".repeat(5) + "😀".repeat(10), 6);
    expect(cut).toBe("xxxxx😀");
    expect(cut).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/); // no lone high surrogate
  });
  it("parses header numbers strictly", () => {
    expect(parseStrictInteger("13335")).toBe(13335);
    expect(parseStrictInteger("13335abc")).toBeNull();
    expect(parseStrictInteger("1e3")).toBeNull();
    expect(parseStrictInteger("")).toBeNull();
    expect(parseStrictInteger(null)).toBeNull();
  });
});

describe("the event (01 §9.1)", () => {
  it.each(["/mcp", "/mcp/server-card", "/mcp/x", "/.well-known/mcp/server-card.json", "/.well-known/ai-catalog.json", "/a2a", "/a2a/"])(
    "blanks query and referrer on the sensitive path %s",
    (path) => {
      expect(isSensitivePath("monolith", path)).toBe(true);
    },
  );

  it("keeps query and referrer on static paths and blanks them on sensitive ones", async () => {
    useSiteOrigin({ "/page.html": { body: "x" } });
    const logs = captureConsole();
    await callDoor("/page.html?utm=1", { headers: { referer: "https://ref.example/a" } });
    await callDoor("/mcp/server-card?secret=1", { headers: { referer: "https://ref.example/secret" } });
    const [page, card] = logs.events();
    expect(page).toMatchObject({ query: "?utm=1", referrer: "https://ref.example/a" });
    expect(card).toMatchObject({ query: "", referrer: "" });
  });

  it("sanitises and caps the User-Agent, marks controlled tests and never verifies identity", async () => {
    const logs = captureConsole();
    await callDoor("/__magnt_probe", { headers: { "user-agent": `MAGNT-Controlled-Test/0.2 ${"x".repeat(2000)}` } });
    await callDoor("/__magnt_probe", { headers: { "user-agent": "magnt-controlled-test/0.2" } });
    const [controlled, lowerCase] = logs.events().map((event) => assertValidEvent(event));
    expect(controlled!.controlled_test).toBe(true);
    expect([...controlled!.userAgent]).toHaveLength(1000);
    expect(lowerCase!.controlled_test).toBe(false);
    expect(controlled!.identity_verified).toBe(false);
  });

  it("records whole-millisecond durations, the request time and a fresh UUID per request", async () => {
    const logs = captureConsole();
    await callDoor("/__magnt_probe");
    await callDoor("/__magnt_probe");
    const [a, b] = logs.events();
    expect(Number.isInteger(a!.duration_ms)).toBe(true);
    expect(a!.event_id).not.toBe(b!.event_id);
    expect(Date.parse(a!.time)).not.toBeNaN();
  });

  it("ignores x-magnt-edge-* headers in the monolith role", async () => {
    const logs = captureConsole();
    await callDoor("/__magnt_probe", { headers: { "x-magnt-edge-country": "XX", "x-magnt-edge-asn": "1" } });
    expect(logs.events()[0]).toMatchObject({ country: "", asn: null });
  });
});

describe("edge privacy canary (10 §3)", () => {
  it("never logs bodies, sensitive queries and referrers, client addresses or cookies", async () => {
    useSiteOrigin({ "/index.html": { body: "x" } });
    const canaries = new Canaries();
    const logs = captureConsole();
    const sensitive = ["/mcp", "/mcp/server-card", "/mcp/other", "/.well-known/ai-catalog.json", "/.well-known/mcp/server-card.json", "/a2a", "/a2a/"];
    for (const path of sensitive) {
      await callDoor(`${path}?q=${canaries.make(`query${path}`)}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          referer: `https://ref.example/?r=${canaries.make(`referrer${path}`)}`,
          "cf-connecting-ip": canaries.make(`ip${path}`),
          cookie: `session=${canaries.make(`cookie${path}`)}`,
          authorization: `Bearer ${canaries.make(`auth${path}`)}`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: canaries.make(`method${path}`), params: { text: canaries.make(`body${path}`) } }),
      });
    }
    // Rejected requests log no body either.
    await callDoor("https://evil.example/mcp", { method: "POST", body: canaries.make("hostRejectedBody") });
    await callDoor("/mcp", { method: "POST", headers: { origin: "https://evil.example" }, body: canaries.make("originRejectedBody") });
    await callDoor("/mcp", { method: "POST", body: canaries.make("oversizedBody") + "x".repeat(25_000) });
    await callDoor("/", { method: "POST", body: canaries.make("staticPostBody") });

    expect(logs.events().length).toBe(sensitive.length + 4);
    await canaries.assertAbsentFrom(logs.lines());
  });
});
