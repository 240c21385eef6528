/**
 * The loopback rule for API origins that may be overridden locally (00 §7:
 * `TELEGRAM_API_ORIGIN`, `GITHUB_OAUTH_ORIGIN`, `GITHUB_API_ORIGIN`). The Worker
 * applies it before any outbound call; `magnt dev` applies it to refuse a
 * stand-in the Worker would refuse. One rule, both sides.
 */

/** The host names every deployable treats as this machine (01 §3). */
export const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"] as const;

/**
 * True when `value` is an `http` origin on a loopback host, written exactly as
 * `new URL(value).origin` prints it (a port is fine; no path, no trailing
 * slash, no user info).
 */
export function isLoopbackHttpOrigin(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.protocol === "http:" && (LOOPBACK_HOSTS as readonly string[]).includes(url.hostname) && url.origin === value;
}
