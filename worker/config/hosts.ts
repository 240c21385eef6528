import { LOOPBACK_HOSTS } from "../contracts/origins";
import type { Env } from "./env";


/**
 * The effective host allow-list (01 §3): the comma-separated `ALLOWED_HOSTS`
 * entries, trimmed and lower-cased, plus the loopback names.
 */
export function allowedHosts(env: Env): ReadonlySet<string> {
  const hosts = new Set<string>(LOOPBACK_HOSTS);
  for (const entry of (env.ALLOWED_HOSTS ?? "").split(",")) {
    const host = entry.trim().toLowerCase();
    if (host !== "") hosts.add(host);
  }
  return hosts;
}

export function isLoopbackHost(hostname: string): boolean {
  return (LOOPBACK_HOSTS as readonly string[]).includes(hostname);
}
