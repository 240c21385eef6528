/**
 * The two cookies of the consent flow (06 §3.3): `__Host-` names (Secure,
 * Path=/, no Domain, so no sibling host can plant or read them), HttpOnly,
 * SameSite=Lax (the GitHub callback is a top-level GET from another site and
 * must carry the link cookie), ten minutes.
 */

export const CSRF_COOKIE = "__Host-magnt_owner_csrf";
export const LINK_COOKIE = "__Host-magnt_owner_link";

/** Lifetime of both cookies, equal to the consent and link requests' (06 §3.2). */
export const COOKIE_MAX_AGE_SECONDS = 600;

export function setCookie(name: string, value: string): string {
  return `${name}=${value}; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=${COOKIE_MAX_AGE_SECONDS}`;
}

export function clearCookie(name: string): string {
  return `${name}=; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=0`;
}

/**
 * The value of cookie `name` in the request's `Cookie` header; null when it is
 * absent or appears more than once (a planted duplicate is not guessed at).
 */
export function readCookie(request: Request, name: string): string | null {
  const header = request.headers.get("cookie");
  if (header === null) return null;
  let found: string | null = null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    if (found !== null) return null;
    found = part.slice(eq + 1).trim();
  }
  return found === "" ? null : found;
}
