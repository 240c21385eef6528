#!/usr/bin/env node
/**
 * A tiny local stand-in for GitHub's OAuth endpoints, so the owner link flow
 * (06 §3.4) runs offline. `npm start -- --owner` runs it by itself (on a free
 * port, signing in as the split run's OWNER_GITHUB_ID); to run it alone, start
 * it and point the owner gateway at the origin it prints:
 *
 *   GITHUB_OAUTH_ORIGIN=http://127.0.0.1:<port>
 *   GITHUB_API_ORIGIN=http://127.0.0.1:<port>
 *
 * (any other non-default value is refused by the gateway: only loopback http
 * origins, written exactly as `new URL(value).origin` prints them).
 *
 * It serves:
 *   GET  /login/oauth/authorize      a page "Sign in as <login> (id <id>)" with Authorize / Cancel
 *                                    (with --auto: redirects back at once as that user)
 *   POST /login/oauth/authorize      the page's buttons
 *   POST /login/oauth/access_token   exchanges a code for a token (checks client id and secret when given)
 *   GET  /user                       the signed-in user's { id, login }
 *
 * Usage: see USAGE below (`--help`).
 *
 * --port defaults to 0: a free port, printed when it listens. --id defaults to
 * $OWNER_GITHUB_ID (so you sign in as the owner); pass another id to see the
 * gateway refuse a stranger. --client-id/--client-secret default to
 * $GITHUB_CLIENT_ID/$GITHUB_CLIENT_SECRET; when neither is set any client is
 * accepted. It never prints codes, tokens, the client id or secret, nor an id
 * that came from the environment: what it says about itself goes to stderr,
 * and stdout has one line per request, method and path only.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const USAGE = `Usage: node scripts/github-stand-in.mjs [options]

A loopback stand-in for GitHub's OAuth endpoints (the owner link flow, offline).

Options:
  --port <n>           port to listen on (default 0: a free port, printed when
                       listening)
  --host <addr>        127.0.0.1 (default), localhost or ::1
  --id <n>             numeric GitHub id it signs in as (default
                       $OWNER_GITHUB_ID, else 1)
  --login <name>       login it reports (default local-owner)
  --client-id <id>     accept only this client id (default $GITHUB_CLIENT_ID;
                       unset: any)
  --client-secret <s>  accept only this client secret (default
                       $GITHUB_CLIENT_SECRET; unset: any)
  --auto               approve at once instead of showing its Authorize page
  -h, --help           show this help

Then set GITHUB_OAUTH_ORIGIN and GITHUB_API_ORIGIN to the origin it prints
(npm start -- --owner runs it by itself).`;

function fail(message) {
  // The message and one line pointing to --help, as magnt's own usage errors (08 §3).
  console.error(`github-stand-in: ${message}\nRun "node scripts/github-stand-in.mjs --help" for usage.`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      port: { type: "string", default: "0" },
      host: { type: "string", default: "127.0.0.1" },
      id: { type: "string" },
      login: { type: "string", default: "local-owner" },
      "client-id": { type: "string", default: process.env.GITHUB_CLIENT_ID },
      "client-secret": { type: "string", default: process.env.GITHUB_CLIENT_SECRET },
      auto: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
} catch (error) {
  fail(error.message);
}
const options = parsed.values;
const idFromEnvironment = options.id === undefined && process.env.OWNER_GITHUB_ID !== undefined;
options.id ??= process.env.OWNER_GITHUB_ID ?? "1";

if (options.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!/^[1-9][0-9]{0,19}$/.test(options.id)) fail("--id must be a positive integer (the numeric GitHub id)");
if (!["127.0.0.1", "localhost", "::1"].includes(options.host)) fail("--host must be a loopback address");
if (!/^[0-9]{1,5}$/.test(options.port) || Number(options.port) > 65535) fail("--port must be a port number (0 for a free one)");

const user = { id: Number(options.id), login: options.login };
/** code → expiry; token → true. Codes are single-use and live 10 minutes, as GitHub's. */
const codes = new Map();
const tokens = new Set();

const escapeHtml = (text) =>
  String(text).replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&#39;");

function send(response, status, body, headers = {}) {
  response.writeHead(status, { "Cache-Control": "no-store", ...headers });
  response.end(body);
}

function json(response, status, value) {
  send(response, status, JSON.stringify(value), { "Content-Type": "application/json" });
}

async function readBody(request) {
  const chunks = [];
  let size = 0;
  for await (const chunk of request) {
    size += chunk.length;
    if (size > 64 * 1024) throw new Error("body too large");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The callback URL with `params`; only http(s) redirect URIs are followed. */
function callbackUrl(redirectUri, params) {
  const url = new URL(redirectUri);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("redirect_uri must be http(s)");
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  return url.href;
}

function clientAccepted(clientId, clientSecret) {
  if (options["client-id"] !== undefined && clientId !== options["client-id"]) return false;
  if (options["client-secret"] !== undefined && clientSecret !== options["client-secret"]) return false;
  return true;
}

function approve(response, redirectUri, state) {
  const code = randomBytes(20).toString("hex");
  codes.set(code, Date.now() + 600_000);
  send(response, 302, "", { Location: callbackUrl(redirectUri, { code, state }) });
}

const server = createServer(async (request, response) => {
  const url = new URL(request.url ?? "/", `http://${request.headers.host ?? "localhost"}`);
  console.log(`${request.method} ${url.pathname}`);
  try {
    if (url.pathname === "/login/oauth/authorize" && request.method === "GET") {
      const clientId = url.searchParams.get("client_id");
      const redirectUri = url.searchParams.get("redirect_uri");
      const state = url.searchParams.get("state");
      if (!redirectUri || !clientAccepted(clientId, options["client-secret"])) return send(response, 400, "unknown client or missing redirect_uri");
      if (options.auto) return approve(response, redirectUri, state);
      const hidden = (name, value) => `<input type="hidden" name="${name}" value="${escapeHtml(value ?? "")}">`;
      const page =
        `<!doctype html><meta charset="utf-8"><title>GitHub stand-in</title>` +
        `<h1>GitHub stand-in</h1><p>Sign in as <strong>${escapeHtml(user.login)}</strong> (id ${user.id}) and return to the owner gateway?</p>` +
        `<form method="post" action="/login/oauth/authorize">${hidden("redirect_uri", redirectUri)}${hidden("state", state)}` +
        `<button name="decision" value="authorize">Authorize</button> <button name="decision" value="cancel">Cancel</button></form>`;
      return send(response, 200, page, { "Content-Type": "text/html; charset=utf-8" });
    }
    if (url.pathname === "/login/oauth/authorize" && request.method === "POST") {
      const form = new URLSearchParams(await readBody(request));
      const redirectUri = form.get("redirect_uri");
      if (!redirectUri) return send(response, 400, "missing redirect_uri");
      if (form.get("decision") !== "authorize") {
        return send(response, 302, "", { Location: callbackUrl(redirectUri, { error: "access_denied", state: form.get("state") }) });
      }
      return approve(response, redirectUri, form.get("state"));
    }
    if (url.pathname === "/login/oauth/access_token" && request.method === "POST") {
      const form = new URLSearchParams(await readBody(request));
      const code = form.get("code") ?? "";
      const expiry = codes.get(code);
      codes.delete(code);
      if (!clientAccepted(form.get("client_id"), form.get("client_secret")) || expiry === undefined || expiry < Date.now()) {
        return json(response, 200, { error: "bad_verification_code", error_description: "The code passed is incorrect or expired." });
      }
      const token = `gho_${randomBytes(18).toString("hex")}`;
      tokens.add(token);
      return json(response, 200, { access_token: token, token_type: "bearer", scope: "" });
    }
    if (url.pathname === "/user" && request.method === "GET") {
      const token = /^(?:Bearer|token) (.+)$/i.exec(request.headers.authorization ?? "")?.[1];
      if (token === undefined || !tokens.has(token)) return json(response, 401, { message: "Bad credentials" });
      tokens.delete(token); // the gateway discards it at once; so does the stand-in
      return json(response, 200, { login: user.login, id: user.id, type: "User" });
    }
    return send(response, 404, "Not Found");
  } catch {
    return send(response, 400, "Bad request");
  }
});

server.on("error", (error) => {
  console.error(
    error.code === "EADDRINUSE"
      ? `github-stand-in: port ${options.port} on ${options.host} is already in use: pass another --port (or --port 0 for a free one)`
      : `github-stand-in: cannot listen on ${options.host}:${options.port}: ${error.code ?? error.message}`,
  );
  process.exit(1);
});

server.listen(Number(options.port), options.host, () => {
  const shown = options.host === "::1" ? "[::1]" : options.host;
  const origin = `http://${shown}:${server.address().port}`;
  const who = idFromEnvironment ? "the id in $OWNER_GITHUB_ID" : `id ${user.id}`;
  console.error(`github-stand-in: listening on ${origin}, signing in as ${user.login} (${who})${options.auto ? ", approving at once" : ""}`);
  console.error(`github-stand-in: set GITHUB_OAUTH_ORIGIN=${origin} and GITHUB_API_ORIGIN=${origin} for the owner gateway`);
});

for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
