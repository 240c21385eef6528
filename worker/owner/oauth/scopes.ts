/**
 * Owner scopes (06 §3.1): `owner.read`, `owner.write`, `owner.publish`.
 *
 * A scope string is a space-separated set of known scopes; anything unknown
 * makes the whole string invalid (never silently dropped, so the owner sees on
 * the consent page exactly what will be granted). An absent or empty scope
 * means `owner.read` only: `owner.write` and `owner.publish` are granted only
 * when named, and `owner.publish` gets its own highlighted consent line.
 */

export const OWNER_SCOPES = ["owner.read", "owner.write", "owner.publish"] as const;
export type OwnerScope = (typeof OWNER_SCOPES)[number];

export const DEFAULT_SCOPE: readonly OwnerScope[] = ["owner.read"];

/** Parses a requested scope string into canonical order; null when it names anything else. */
export function parseScope(value: string | null | undefined): readonly OwnerScope[] | null {
  if (value === null || value === undefined || value.trim() === "") return DEFAULT_SCOPE;
  const requested = new Set<string>();
  for (const part of value.split(" ")) {
    if (part === "") continue;
    if (!(OWNER_SCOPES as readonly string[]).includes(part)) return null;
    requested.add(part);
  }
  return OWNER_SCOPES.filter((scope) => requested.has(scope));
}

/** The canonical scope string of a set of scopes. */
export function formatScope(scopes: readonly OwnerScope[]): string {
  return OWNER_SCOPES.filter((scope) => scopes.includes(scope)).join(" ");
}

/** Scopes of a stored (already validated) scope claim; unknown words are dropped. */
export function scopesOf(claim: string): readonly OwnerScope[] {
  const words = new Set(claim.split(" "));
  return OWNER_SCOPES.filter((scope) => words.has(scope));
}

/** Whether every scope of `wanted` is in `held`. */
export function isSubset(wanted: readonly OwnerScope[], held: readonly OwnerScope[]): boolean {
  return wanted.every((scope) => held.includes(scope));
}
