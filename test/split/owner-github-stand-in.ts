/**
 * A stand-in GitHub for the owner gateway of the split topology (06 §3.4),
 * installed as the gateway's Miniflare `outboundService`: every outbound
 * `fetch` of magnt-owner lands here, in the Node process, and nowhere else —
 * so the link flow runs with no network, and a request to any host other than
 * the loopback stand-in origin is answered 599 (the flow then fails loudly).
 *
 * Stateless on purpose (the runner inside workerd cannot reach Node state):
 * the test picks the GitHub code `ghcode.<id>.<login>.<nonce>` (./owner-fixture.ts),
 * the exchange turns it into a token that carries the same user, and `/user`
 * answers that user. The client id and secret must be the fixture's.
 * Node-side module: imported by ./topology.ts only, never by a test.
 */
import { GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET, GITHUB_STAND_IN_ORIGIN } from "./owner-fixture.js";

const CODE = /^ghcode\.([1-9][0-9]{0,19})\.([A-Za-z0-9-]{1,39})\.[0-9a-f-]{36}$/;

function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), { status, headers: { "Content-Type": "application/json" } });
}

export async function githubStandIn(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.origin !== GITHUB_STAND_IN_ORIGIN) return new Response("no network in tests", { status: 599 });
  if (request.method === "POST" && url.pathname === "/login/oauth/access_token") {
    const form = new URLSearchParams(await request.text());
    const match = CODE.exec(form.get("code") ?? "");
    if (form.get("client_id") !== GITHUB_CLIENT_ID || form.get("client_secret") !== GITHUB_CLIENT_SECRET || match === null) {
      return json({ error: "bad_verification_code", error_description: "The code passed is incorrect or expired." });
    }
    const token = `gho_${Buffer.from(JSON.stringify({ id: Number(match[1]), login: match[2] })).toString("base64url")}`;
    return json({ access_token: token, token_type: "bearer", scope: "" });
  }
  if (request.method === "GET" && url.pathname === "/user") {
    const token = /^Bearer gho_([A-Za-z0-9_-]+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    if (token === undefined) return json({ message: "Bad credentials" }, 401);
    const user = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as { id: number; login: string };
    return json({ login: user.login, id: user.id, node_id: "MDQ6VXNlcjE=", type: "User" });
  }
  return new Response("Not Found", { status: 404 });
}
