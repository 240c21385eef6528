/**
 * A fake GitHub for the owner link flow (06 §3.4), on the network seam of
 * `network.ts`: `github.com` (authorize page, code exchange) and
 * `api.github.com` (`/user`). It plays both GitHub and the person signing in:
 * `signIn(location, user)` follows the gateway's redirect to GitHub as if that
 * user approved, and returns the callback URL GitHub would send the browser to.
 *
 * Every request is recorded so tests can check what reached GitHub (client
 * secret, `allow_signup=false`, no `scope`) and that nothing else did.
 */
import { useFakeHost } from "./network";

export const GITHUB_HOST = "github.com";
export const GITHUB_API_HOST = "api.github.com";

export interface GithubUser {
  readonly id: number;
  readonly login: string;
}

/** How the fake misbehaves, for the failure paths of 06 §3.4. */
export type GithubMode = "ok" | "exchange_error_body" | "exchange_500" | "exchange_redirect" | "user_500" | "network_error";

export interface GithubFake {
  readonly requests: Request[];
  /** Bodies of the POSTs the fake received (form text), in order. */
  readonly exchangeBodies: string[];
  mode: GithubMode;
  /** Follows the gateway's 302 to `/login/oauth/authorize` as `user` approving; returns the callback URL. */
  signIn(location: string, user: GithubUser): string;
  /** The callback URL GitHub sends when the user refuses (`error=access_denied`). */
  refuse(location: string): string;
}

export function useGithub(options: {
  clientId: string;
  clientSecret: string;
  /** Hosts of a loopback stand-in (`GITHUB_OAUTH_ORIGIN` / `GITHUB_API_ORIGIN` overrides). */
  oauthHost?: string;
  apiHost?: string;
}): GithubFake {
  const oauthHost = options.oauthHost ?? GITHUB_HOST;
  const apiHost = options.apiHost ?? GITHUB_API_HOST;
  const codes = new Map<string, GithubUser>();
  const tokens = new Map<string, GithubUser>();
  const fake: GithubFake = {
    requests: [],
    exchangeBodies: [],
    mode: "ok",
    signIn(location, user) {
      const url = new URL(location);
      if (url.host !== oauthHost || url.pathname !== "/login/oauth/authorize") throw new Error(`not a GitHub authorize URL: ${url.pathname}`);
      if (url.searchParams.get("client_id") !== options.clientId) throw new Error("wrong GitHub client_id");
      const code = `ghcode_${crypto.randomUUID()}`;
      codes.set(code, user);
      const callback = new URL(url.searchParams.get("redirect_uri")!);
      callback.searchParams.set("code", code);
      callback.searchParams.set("state", url.searchParams.get("state")!);
      return callback.href;
    },
    refuse(location) {
      const url = new URL(location);
      const callback = new URL(url.searchParams.get("redirect_uri")!);
      callback.searchParams.set("error", "access_denied");
      callback.searchParams.set("state", url.searchParams.get("state")!);
      return callback.href;
    },
  };

  const oauthServer = async (request: Request): Promise<Response> => {
    fake.requests.push(request.clone());
    if (fake.mode === "network_error") throw new TypeError("connection reset CANARY-github-network-error");
    const url = new URL(request.url);
    if (request.method !== "POST" || url.pathname !== "/login/oauth/access_token") return new Response("Not Found", { status: 404 });
    const body = new TextDecoder().decode(await request.arrayBuffer());
    fake.exchangeBodies.push(body);
    if (fake.mode === "exchange_500") return new Response("oops CANARY-github-500-body", { status: 500 });
    if (fake.mode === "exchange_redirect") return new Response(null, { status: 302, headers: { Location: "https://evil.example/steal" } });
    const form = new URLSearchParams(body);
    const user = codes.get(form.get("code") ?? "");
    const accepted =
      form.get("client_id") === options.clientId && form.get("client_secret") === options.clientSecret && user !== undefined;
    if (fake.mode === "exchange_error_body" || !accepted) {
      return Response.json({ error: "bad_verification_code", error_description: "The code passed is incorrect or expired." });
    }
    codes.delete(form.get("code")!);
    const token = `gho_${crypto.randomUUID().replaceAll("-", "")}`;
    tokens.set(token, user!);
    return Response.json({ access_token: token, token_type: "bearer", scope: "" });
  };

  const apiServer = (request: Request): Response => {
    fake.requests.push(request.clone());
    if (fake.mode === "network_error") throw new TypeError("connection reset CANARY-github-network-error");
    const url = new URL(request.url);
    if (request.method !== "GET" || url.pathname !== "/user") return new Response("Not Found", { status: 404 });
    if (fake.mode === "user_500") return new Response("oops", { status: 500 });
    const token = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    const user = token === undefined ? undefined : tokens.get(token);
    if (user === undefined) return Response.json({ message: "Bad credentials" }, { status: 401 });
    return Response.json({ login: user.login, id: user.id, node_id: "MDQ6VXNlcjE=", type: "User" });
  };

  if (oauthHost === apiHost) {
    // A local stand-in serves both on one origin (scripts/github-stand-in.mjs does the same).
    useFakeHost(oauthHost, (request) => (new URL(request.url).pathname === "/user" ? apiServer(request) : oauthServer(request)));
  } else {
    useFakeHost(oauthHost, oauthServer);
    useFakeHost(apiHost, apiServer);
  }
  return fake;
}
