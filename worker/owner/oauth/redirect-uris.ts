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
