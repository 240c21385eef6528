/**
 * The single exit to the network (10 §2). Every outbound request of the door
 * (the static origin, Telegram, and GitHub in a later release) goes through
 * here, so tests can route all of them to local fakes and fail on any
 * unexpected host.
 *
 * Threat model of the API exit (`postJsonCapped`, used for Telegram, 05 §6):
 * - the URL carries a credential (the bot token is part of the request path),
 *   so nothing here ever logs, stores or returns the URL, an error object or
 *   an error message — failures come back as a closed set of kinds;
 * - a hostile or broken upstream could redirect us elsewhere (the token would
 *   follow the redirect), stall forever, or stream an endless body: redirects
 *   are refused (`redirect: "manual"`, any 3xx is a failure), every call has a
 *   timeout, and bodies are read with a byte cap;
 * - an operator override of an API origin can only point at a loopback
 *   stand-in (`loopbackOverride`), never at another public host.
 *
 * The document exit (`getClientMetadataCapped`, the owner gateway's Client ID
 * Metadata Documents, 06 §3.7) fetches a URL a stranger chose, so the caller
 * passes only URLs on an origin the owner listed, and here: no redirect (a
 * listed host cannot bounce the gateway to an unlisted one), no credential
 * (a Worker's fetch has no cookie jar, and none is added), 5 KiB and 3 s at most, and a stand-in origin that can only be a
 * loopback one.
 */
import { isLoopbackHttpOrigin } from "../contracts/origins";

export function fetchOutbound(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  return fetch(input, init);
}

/** Default time limit of an API call (05 §6: 8 s). */
export const OUTBOUND_TIMEOUT_MS = 8_000;
/** Default cap on a response body we read (05 §6: 64 KiB). */
export const OUTBOUND_BODY_MAX_BYTES = 64 * 1024;

/**
 * The origin to call for an API whose production origin may be overridden
 * locally (00 §7: `TELEGRAM_API_ORIGIN`, later the GitHub origins). Absent →
 * the default. Present → it must be the default itself, or an `http` origin on
 * `localhost`, `127.0.0.1` or `[::1]` written exactly as `new URL(value).origin`
 * prints it (a port is fine; no path, no trailing slash, no user info).
 * Anything else is `null`: the caller reports itself misconfigured and sends
 * nothing, so a typo can never send a credential to a third-party host.
 */
export function loopbackOverride(configured: string | undefined, defaultOrigin: string): string | null {
  if (configured === undefined || configured === defaultOrigin) return defaultOrigin;
  return isLoopbackHttpOrigin(configured) ? configured : null;
}

/** Why an API call produced no readable answer; never carries a message or the URL. */
export type OutboundFailureKind = "timeout" | "network" | "redirect";

export type CappedResponse =
  | {
      ok: true;
      status: number;
      /** The body as text, or null when it was larger than the cap or could not be read. */
      body: string | null;
      /** The answer's headers (the document cache reads `Cache-Control`). */
      headers: Headers;
    }
  | { ok: false; kind: OutboundFailureKind; status?: number };

/**
 * POSTs `payload` as JSON and reads the answer within a time limit and a byte
 * cap. Never throws and never follows a redirect: a 3xx is `redirect` (and the
 * redirect body is discarded unread).
 */
export function postJsonCapped(
  url: string,
  payload: unknown,
  options: { timeoutMs?: number; maxBodyBytes?: number } = {},
): Promise<CappedResponse> {
  return guardedRequest(
    url,
    { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload) },
    options,
  );
}

/**
 * The GitHub exit of the owner link flow (06 §3.4): the code exchange (POST,
 * form body holding the client secret) and the user lookup (GET with the
 * user's GitHub token). Same guarantees as `postJsonCapped`.
 */
export function githubRequestCapped(
  url: string,
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: URLSearchParams },
  options: { timeoutMs?: number; maxBodyBytes?: number } = {},
): Promise<CappedResponse> {
  return guardedRequest(url, { method: init.method, headers: init.headers, body: init.body ?? null }, options);
}

/** Limits of a client metadata document (06 §3.7): the draft's 5 KB, and a short wait — the owner is looking at a loading page. */
export const CLIENT_METADATA_MAX_BYTES = 5 * 1024;
export const CLIENT_METADATA_TIMEOUT_MS = 3_000;

/**
 * GETs the Client ID Metadata Document at `url`, an `https` URL on an origin
 * the owner listed — or, with `standIn` (a loopback stand-in for tests and
 * local runs), the same path and query at that origin. A `standIn` that is not
 * a loopback `http` origin sends nothing (`network`), whoever passed it. Same
 * guarantees as `postJsonCapped`, with the document limits.
 */
export function getClientMetadataCapped(
  url: string,
  standIn: string | null,
  options: { timeoutMs?: number; maxBodyBytes?: number } = {},
): Promise<CappedResponse> {
  let target: string;
  try {
    const parsed = new URL(url);
    if (standIn !== null && !isLoopbackHttpOrigin(standIn)) return Promise.resolve({ ok: false, kind: "network" });
    target = standIn === null ? parsed.href : `${standIn}${parsed.pathname}${parsed.search}`;
  } catch {
    return Promise.resolve({ ok: false, kind: "network" });
  }
  return guardedRequest(
    target,
    { method: "GET", headers: { Accept: "application/json" }, body: null },
    { timeoutMs: options.timeoutMs ?? CLIENT_METADATA_TIMEOUT_MS, maxBodyBytes: options.maxBodyBytes ?? CLIENT_METADATA_MAX_BYTES },
  );
}

/**
 * One API call under the guarantees of the header: never throws, never follows
 * a redirect (a credential in the URL or body would follow it), a time limit,
 * a capped body, and failures only as a kind — never the URL or an error text.
 */
async function guardedRequest(
  url: string,
  init: { method: string; headers: Record<string, string>; body: BodyInit | null },
  options: { timeoutMs?: number; maxBodyBytes?: number },
): Promise<CappedResponse> {
  const signal = AbortSignal.timeout(options.timeoutMs ?? OUTBOUND_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetchOutbound(url, Object.assign({}, init, { redirect: "manual" as const, signal }));
  } catch {
    // The error object may quote the URL (and with it a token): only its kind survives.
    return { ok: false, kind: signal.aborted ? "timeout" : "network" };
  }
  if (response.status >= 300 && response.status < 400) {
    await discard(response);
    return { ok: false, kind: "redirect", status: response.status };
  }
  const body = await readCapped(response, options.maxBodyBytes ?? OUTBOUND_BODY_MAX_BYTES);
  if (body === "timeout") return { ok: false, kind: "timeout", status: response.status };
  return { ok: true, status: response.status, body, headers: response.headers };
}

/** Reads at most `maxBytes` bytes of the body as UTF-8; null when larger or unreadable. */
async function readCapped(response: Response, maxBytes: number): Promise<string | null | "timeout"> {
  const reader = response.body?.getReader();
  if (reader === undefined) return "";
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return null;
      }
      chunks.push(value);
    }
  } catch (error) {
    return error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError") ? "timeout" : null;
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // Nothing to report: the answer is already a failure, and its body is never read.
  }
}
