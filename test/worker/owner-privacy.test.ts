/**
 * Canaries (06 DoD, 10 §3): client secret material, codes, tokens, cookies,
 * client-chosen values and the GitHub login never appear in a log line or an
 * error body; the GitHub login appears nowhere at all (not even inside a code
 * or token), and telemetry facts are closed labels only.
 */
import { describe, expect, it } from "vitest";
import { OUTCOMES } from "../../worker/contracts/events";
import { selectRows } from "../helpers/db";
import { captureConsole } from "../helpers/door";
import { Canaries } from "../helpers/privacy";
import {
  authorize,
  callback,
  consentForm,
  cookieValue,
  decide,
  exchange,
  harness,
  link,
  LOOPBACK_REDIRECT,
  OWNER_ORIGIN,
  pkce,
  refresh,
  register,
  registerClient,
  token,
  type TokenSet,
} from "../helpers/owner";

const STEPS = ["metadata", "register", "authorize", "consent", "github_callback", "token_code", "token_refresh", "mcp", "other"];


/** Decodes every JWS-looking segment of `text` so canaries inside signed payloads are found too. */
function withDecodedPayloads(text: string): string {
  const decoded: string[] = [text];
  for (const match of text.matchAll(/[A-Za-z0-9_-]{10,}\.([A-Za-z0-9_-]{10,})\.[A-Za-z0-9_-]{10,}/g)) {
    try {
      const part = match[1]!.replaceAll("-", "+").replaceAll("_", "/");
      decoded.push(atob(part + "=".repeat((4 - (part.length % 4)) % 4)));
    } catch {
      // not base64: ignore
    }
  }
  return decoded.join("\n");
}

describe("owner OAuth privacy", () => {
  it("no canary in any log line or error body; the GitHub login nowhere at all", async () => {
    const consoleCapture = captureConsole();
    const canaries = new Canaries();
    const secret = canaries.make("githubClientSecret");
    const login = canaries.make("githubLogin");
    const clientName = canaries.make("clientName");
    const clientState = canaries.make("clientState");
    const h = harness({ GITHUB_CLIENT_SECRET: secret });

    // Happy path with canaries in every client-chosen value.
    const redirectUri = `http://127.0.0.1:33418/${canaries.make("redirectPath")}`;
    const clientId = await registerClient(h, [redirectUri], clientName);
    const { verifier, challenge } = await pkce();
    const page = await authorize(h, {
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: clientState,
    });
    const form = await consentForm(page);
    const approved = await decide(h, form, "approve");
    const linkCookie = cookieValue(approved.response, "__Host-magnt_owner_link")!;
    const back = await callback(h, h.github.signIn(approved.response.headers.get("location")!, { id: 583231, login }), linkCookie);
    const code = new URL(back.response.headers.get("location")!).searchParams.get("code")!;
    const tokens = await exchange(h, { clientId, redirectUri, verifier, code, state: clientState });
    const rotated = (await (await refresh(h, clientId, tokens.refresh_token)).response.json()) as TokenSet;

    // Error paths that carry the same secrets in their requests.
    await token(h, { grant_type: "authorization_code", code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier });
    await refresh(h, clientId, tokens.refresh_token);
    await refresh(h, clientId, rotated.refresh_token, "owner.read owner.write");
    await authorize(h, { client_id: clientId, redirect_uri: `${redirectUri}x`, response_type: "code", state: clientState, code_challenge: challenge, code_challenge_method: "S256" });
    await authorize(h, { client_id: clientId, redirect_uri: redirectUri, response_type: "token", state: clientState });
    await decide(h, form, "approve", { cookieHeader: "__Host-magnt_owner_csrf=other" });
    await register(h, { redirect_uris: [`https://evil.example/${clientName}`], client_name: clientName });
    await register(h, { redirect_uris: [redirectUri], client_name: `${clientName}${"x".repeat(100)}` });
    const stranger = await decide(h, await consentForm(await authorize(h, {
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: clientState,
    })), "approve");
    await callback(h, h.github.signIn(stranger.response.headers.get("location")!, { id: 4242, login }), cookieValue(stranger.response, "__Host-magnt_owner_link"));
    h.github.mode = "exchange_500";
    const failing = await decide(h, await consentForm(await authorize(h, {
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
    })), "approve");
    await callback(h, h.github.signIn(failing.response.headers.get("location")!, { id: 583231, login }), cookieValue(failing.response, "__Host-magnt_owner_link"));

    // Secrets minted during the run are canaries too.
    const minted = [code, tokens.access_token, tokens.refresh_token, rotated.access_token, rotated.refresh_token, linkCookie, form.cookie, verifier];

    const errorBodies: string[] = [];
    const everything: string[] = [];
    for (const answer of h.answers) {
      expect(answer.outcome === null || (OUTCOMES as readonly string[]).includes(answer.outcome)).toBe(true);
      expect(STEPS).toContain(answer.step);
      const body = await answer.response.clone().text();
      const headers = [...answer.response.headers].map(([name, value]) => `${name}: ${value}`).join("\n");
      everything.push(withDecodedPayloads(`${headers}\n${body}`));
      if (answer.response.status >= 400) errorBodies.push(body);
    }
    const lines = consoleCapture.lines();
    await canaries.assertAbsentFrom([...lines, ...errorBodies]);
    for (const value of minted) {
      for (const line of [...lines, ...errorBodies]) expect(line).not.toContain(value);
    }
    // The login is never compared, stored or shown: not in any response, cookie, code or token.
    expect(everything.join("\n")).not.toContain(login);
    expect(everything.join("\n")).not.toContain(secret);
    // The error pages exist and were checked (the run did reach them).
    expect(errorBodies.length).toBeGreaterThanOrEqual(7);
    expect(h.answers.some((answer) => answer.outcome === "not_owner")).toBe(true);
  });

  it("the consent page escapes every client-chosen value", async () => {
    const h = harness();
    const hostile = `<script>alert("x")</script>&'"`;
    const clientId = await registerClient(h, [LOOPBACK_REDIRECT], hostile);
    const { challenge } = await pkce();
    const page = await authorize(h, {
      client_id: clientId,
      redirect_uri: LOOPBACK_REDIRECT,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: `"><script>`,
    });
    const html = await page.response.text();
    expect(html).not.toContain("<script>");
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;&quot;");
    expect(OWNER_ORIGIN).toBe("https://owner.magnt.ru");
  });

  it("a linked flow leaves only opaque single-use ids in D1, never a token or a GitHub value", async () => {
    const h = harness();
    const linked = await link(h);
    const tokens = await exchange(h, linked);
    await refresh(h, linked.clientId, tokens.refresh_token);
    await refresh(h, linked.clientId, tokens.refresh_token); // reuse → family row
    const rows = await selectRows<{ id: string; kind: string; expires_at: string }>("SELECT id, kind, expires_at FROM owner_oauth_spent");
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const row of rows) {
      expect(row.id).toMatch(row.kind === "family" ? /^family:[A-Za-z0-9_-]{43}$/ : /^[A-Za-z0-9_-]{43}$/);
      expect(row.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
  });
});
