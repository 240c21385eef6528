/**
 * What the consent page tells the owner, and what a client can make it say
 * (issue 17 items 1, 5, 6; 06 §3.2, §3.3):
 * - a `client_name` cannot rewrite the page: registration removes every C0/C1
 *   control, U+2028/U+2029 and bidirectional control, the page removes them
 *   again from a name signed before that rule (a client id never expires), and
 *   the name sits in a `<bdi>` labelled as the client's own choice, outside
 *   the page's own sentences;
 * - the redirect target is shown in ASCII: the full URI and its host, an IDN
 *   host as punycode (the WHATWG URL parser of workerd gives it), so a
 *   look-alike cannot pass for another site;
 * - a non-loopback redirect adds one sentence: approve only if you started
 *   this connection yourself, just now, from that site;
 * - rotating `OWNER_TOKEN_SIGNING_KEY` invalidates every registered client id
 *   (registration is stateless), which docs/owner-activation.md states.
 */
import { describe, expect, it } from "vitest";
import { deriveOwnerKeys, serveAuthorize } from "../../worker/owner";
import { decodeSigningKey } from "../../worker/owner/config";
import { issueClientId } from "../../worker/owner/oauth/objects";
import {
  authorize,
  CLAUDE_REDIRECT,
  exchange,
  harness,
  link,
  LOOPBACK_REDIRECT,
  OWNER_ORIGIN,
  pkce,
  randomKey,
  refresh,
  register,
  registerClient,
  type Harness,
} from "../helpers/owner";

/** Every character the registration and the page must never pass on (the list of issue 17 item 1). */
const CONTROLS =
  Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code)).join("") +
  Array.from({ length: 0x21 }, (_, code) => String.fromCharCode(0x7f + code)).join("") +
  "\u2028\u2029\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u061c";
const ANY_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]/;

/** The name of the issue: shown raw, the heading would read "Allow Claude read owner.write …". */
const REVERSING_NAME = "Claude \u202Eetirw.renwo daer\u202C";

async function consentHtml(h: Harness, clientId: string, redirectUri: string): Promise<string> {
  const { challenge } = await pkce();
  const page = await authorize(h, {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: "code",
    code_challenge: challenge,
    code_challenge_method: "S256",
    scope: "owner.read",
  });
  expect(page.response.status, await page.response.clone().text()).toBe(200);
  return page.response.text();
}

/** The text of the page's `<bdi class="client-name">`, or null. */
function shownName(html: string): string | null {
  return /<bdi class="client-name">([^<]*)<\/bdi>/.exec(html)?.[1] ?? null;
}

async function registeredName(h: Harness, clientName: string): Promise<string> {
  const answer = await register(h, { redirect_uris: [LOOPBACK_REDIRECT], client_name: clientName });
  expect(answer.response.status).toBe(201);
  return ((await answer.response.json()) as { client_name: string }).client_name;
}

describe("a client_name cannot rewrite the consent page (issue 17 item 1)", () => {
  it("registration removes C0/C1 controls, U+2028/9 and every bidi control, then trims", async () => {
    const h = harness();
    expect(await registeredName(h, REVERSING_NAME)).toBe("Claude etirw.renwo daer");
    expect(await registeredName(h, `Claude${CONTROLS}Desktop`)).toBe("ClaudeDesktop");
    expect(await registeredName(h, "\u202E  Claude Desktop \u2066")).toBe("Claude Desktop");
    // Nothing printable left: the default name, as for an absent one.
    expect(await registeredName(h, `\u202E\u202C${"\u0000"}`)).toBe("MCP client");
    // Ordinary text of any script, ZWJ emoji and accents stay as they were.
    expect(await registeredName(h, "Клиент 👩‍💻 é  עברית")).toBe("Клиент 👩‍💻 é  עברית");
    // The 100-code-point limit applies to the name as stored.
    expect(await registeredName(h, `${"n".repeat(100)}${"\u202E".repeat(20)}`)).toBe("n".repeat(100));
  });

  it("the page shows the name isolated in <bdi>, labelled as the client's own choice, outside the heading", async () => {
    const h = harness();
    const clientId = await registerClient(h, [LOOPBACK_REDIRECT], REVERSING_NAME);
    const html = await consentHtml(h, clientId, LOOPBACK_REDIRECT);
    expect(html).not.toMatch(ANY_CONTROL);
    expect(shownName(html)).toBe("Claude etirw.renwo daer");
    expect(html).toContain('The client calls itself <strong><bdi class="client-name">Claude etirw.renwo daer</bdi></strong>.');
    expect(html).toContain("It chose that name for itself; nothing checks it.");
    // The page's own sentences carry no client text.
    expect(html).toContain("<h1>Allow a client to act for the owner of MAGNT?</h1>");
    // Still escaped, still script-free.
    const tagged = await registerClient(h, [LOOPBACK_REDIRECT], `<script>alert(1)</script>"'&`);
    const taggedHtml = await consentHtml(h, tagged, LOOPBACK_REDIRECT);
    expect(shownName(taggedHtml)).toBe("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;");
    expect(taggedHtml).not.toContain("<script");
  });

  it("a client id signed before the rule, with controls in its name, shows the cleaned name", async () => {
    const h = harness();
    const keys = await deriveOwnerKeys(decodeSigningKey(h.env.OWNER_TOKEN_SIGNING_KEY)!);
    const old = await issueClientId(keys, [LOOPBACK_REDIRECT], `${REVERSING_NAME}\u0007\u009b\u2029`, h.time.now);
    const html = await consentHtml(h, old, LOOPBACK_REDIRECT);
    expect(html).not.toMatch(ANY_CONTROL);
    expect(shownName(html)).toBe("Claude etirw.renwo daer");
    const empty = await issueClientId(keys, [LOOPBACK_REDIRECT], "\u202E\u202C", h.time.now);
    expect(shownName(await consentHtml(h, empty, LOOPBACK_REDIRECT))).toBe("MCP client");
  });

  it("an IDN redirect host is shown in ASCII (punycode), never in its Unicode form", async () => {
    // The operator lists the origin as `new URL(…).origin` prints it; the client writes the Unicode form.
    const h = harness({ OWNER_REDIRECT_ORIGINS: "https://claude.ai, https://xn--e1afmkfd.xn--p1ai" });
    const idn = "https://пример.рф/oauth/callback";
    const clientId = await registerClient(h, [idn]);
    const html = await consentHtml(h, clientId, idn);
    expect(html).toContain('<strong class="redirect-host">xn--e1afmkfd.xn--p1ai</strong>');
    expect(html).toContain('<code class="redirect-uri">https://xn--e1afmkfd.xn--p1ai/oauth/callback</code>');
    expect(html).toContain("from https://xn--e1afmkfd.xn--p1ai:");
    expect(html).not.toContain("пример");
    expect(html).not.toContain("рф");
  });
});

describe("consent for a hosted client says where the tokens go (issue 17 item 5)", () => {
  const WARNING = /<p class="warning">[^<]*<strong>Approve only if you started this connection yourself, just now, from ([^<]+):<\/strong>/;

  it("a non-loopback redirect: the full URI, its host and the one-sentence warning naming the site", async () => {
    const h = harness();
    const clientId = await registerClient(h, [CLAUDE_REDIRECT]);
    const html = await consentHtml(h, clientId, CLAUDE_REDIRECT);
    expect(html).toContain(`<code class="redirect-uri">${CLAUDE_REDIRECT}</code>`);
    expect(html).toContain('<strong class="redirect-host">claude.ai</strong>');
    expect(WARNING.exec(html)?.[1]).toBe("https://claude.ai");
    expect(html).toContain("the owner's tokens go to whichever account on that site started it.</p>");
    // Exactly one such sentence on the page.
    expect(html.match(/Approve only if/g)).toHaveLength(1);
  });

  it("the URI is shown in full, ASCII and escaped, whatever the client wrote in its path and query", async () => {
    const h = harness();
    const uri = "https://claude.ai/cb/\u202Eevil/\u00e9?a=1&b=<2>";
    const clientId = await registerClient(h, [uri]);
    const html = await consentHtml(h, clientId, uri);
    expect(html).not.toMatch(ANY_CONTROL);
    expect(html).toContain('<code class="redirect-uri">https://claude.ai/cb/%E2%80%AEevil/%C3%A9?a=1&amp;b=%3C2%3E</code>');
    expect(WARNING.exec(html)?.[1]).toBe("https://claude.ai");
  });

  it("a loopback redirect (a program on the owner's machine) shows the URI and no warning", async () => {
    const h = harness();
    const clientId = await registerClient(h, [LOOPBACK_REDIRECT]);
    const html = await consentHtml(h, clientId, LOOPBACK_REDIRECT);
    expect(html).toContain(`<code class="redirect-uri">${LOOPBACK_REDIRECT}</code>`);
    expect(html).toContain('<strong class="redirect-host">127.0.0.1:33418</strong>');
    expect(html).not.toContain("Approve only if");
    expect(html).not.toContain('class="warning"');
  });
});

describe("rotating OWNER_TOKEN_SIGNING_KEY (issue 17 item 6)", () => {
  it("invalidates every registered client id: authorize and refresh refuse it; registering again works", async () => {
    const h = harness();
    const linked = await link(h);
    const tokens = await exchange(h, linked);
    const rotated = { ...h.env, OWNER_TOKEN_SIGNING_KEY: randomKey() };

    const { challenge } = await pkce();
    const params = new URLSearchParams({
      client_id: linked.clientId,
      redirect_uri: LOOPBACK_REDIRECT,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const request = new Request(`${OWNER_ORIGIN}/oauth/authorize?${params}`);
    expect((await h.call(serveAuthorize, request)).response.status).toBe(200);
    const refused = await h.call(serveAuthorize, request, rotated);
    expect(refused.response.status).toBe(400);
    expect(await refused.response.text()).toContain("The client_id is missing, too long or not valid here.");

    const rotatedHarness: Harness = { ...h, env: rotated, call: (handler, req, envOverride) => h.call(handler, req, envOverride ?? rotated) };
    const refreshed = await refresh(rotatedHarness, linked.clientId, tokens.refresh_token);
    expect(refreshed.response.status).toBe(401);
    expect(await refreshed.response.json()).toMatchObject({ error: "invalid_client" });

    // What the client must do: register again (and link again) under the new key.
    const again = await registerClient(rotatedHarness);
    expect((await link(rotatedHarness, { clientId: again })).code).toEqual(expect.any(String));
  });
});
