/**
 * Redirect URI policy (06 §3.2–§3.3), the guard against an open redirector and
 * against codes delivered to a stranger.
 *
 * Threat model: an attacker registers a client whose redirect URI is his own
 * site, then lures the owner to approve it; or reuses a client registered while
 * an origin was still allowed. So a URI is accepted only when it is `https` on
 * an origin the operator listed in `OWNER_REDIRECT_ORIGINS` (compared exactly,
 * origin to origin), or `http` on a loopback host (a native client on the
 * owner's own machine). The check runs at registration and again at every
 * authorization, because the list may have shrunk since.
 */
import { isLoopbackHost } from "../../config/hosts";

/** Longest redirect URI accepted (06 §3.2). */
export const REDIRECT_URI_MAX = 512;
/** Most redirect URIs a client may register (06 §3.2). */
export const REDIRECT_URIS_MAX = 5;

/**
 * Whether `uri` is an acceptable redirect URI under `allowedOrigins`: at most
 * 512 characters, absolute, no fragment, no user info, and an allowed origin.
 */
export function isAllowedRedirectUri(uri: string, allowedOrigins: ReadonlySet<string>): boolean {
  if (uri.length === 0 || uri.length > REDIRECT_URI_MAX || uri.includes("#")) return false;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.username !== "" || url.password !== "") return false;
  if (url.protocol === "https:") return allowedOrigins.has(url.origin);
  if (url.protocol === "http:") return isLoopbackHost(url.hostname);
  return false;
}

/**
 * What the consent page shows of a redirect URI that passed
 * `isAllowedRedirectUri`. Every part is ASCII: the WHATWG URL parser writes an
 * IDN host as punycode (`https://пример.рф` → `xn--e1afmkfd.xn--p1ai`) and
 * percent-encodes every other non-ASCII character, so a look-alike host or a
 * bidi control in the path cannot pass for another address.
 */
export interface RedirectTarget {
  /** The whole URI, serialised by the URL parser. */
  readonly uri: string;
  /** Host and port. */
  readonly host: string;
  readonly origin: string;
  /** `http` on a loopback host: a program on the owner's own machine receives the answer. */
  readonly loopback: boolean;
}

export function redirectTarget(redirectUri: string): RedirectTarget {
  const url = new URL(redirectUri);
  return { uri: url.href, host: url.host, origin: url.origin, loopback: url.protocol === "http:" && isLoopbackHost(url.hostname) };
}

/**
 * `redirectUri` with OAuth response parameters appended (RFC 6749 §4.1.2: the
 * URI's own query is kept). Only ever called with a URI that passed
 * `isAllowedRedirectUri` and was bound to the owner's decision.
 */
export function redirectWith(redirectUri: string, params: Readonly<Record<string, string | null>>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null) url.searchParams.append(name, value);
  }
  return url.href;
}
