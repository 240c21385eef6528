/**
 * Host allow-list check (01 §3).
 *
 * Threat model: DNS rebinding and stray hostnames. A browser tricked into
 * resolving an attacker's name to the door would send that name as Host; the
 * door answers only for its own names and the loopback names.
 */
import { allowedHosts } from "../config/hosts";
import type { Env } from "../config/env";

type HostCheck = { ok: true } | { ok: false; reason: "host_not_allowed" };

export function validateHost(url: URL, env: Env): HostCheck {
  // URL.hostname is already lower-cased and without the port.
  return allowedHosts(env).has(url.hostname) ? { ok: true } : { ok: false, reason: "host_not_allowed" };
}
