/**
 * Keeping private text out of smoke's printed messages (08 §6: output never
 * contains task text, the summary, profile prose or tokens).
 *
 * Threat model: smoke prints its own step details (receipts, statuses, flags)
 * and, when a step fails, an error message. Its own messages carry no private
 * text; but a message that comes from the client or the server can: a
 * JSON-RPC error or an HTTP error page may echo the request body (the contact
 * summary, the task tokens) or the profile. Such text may also be echoed only
 * in part (a server that cuts long values), so besides exact occurrences,
 * every run of `WINDOW_WORDS` consecutive words of a private text is removed.
 */

/** Runs of this many consecutive words of a private text are redacted wherever they appear. */
export const WINDOW_WORDS = 4;
/** Profile strings shorter than this are labels (`MAGNT`, `0.2.0`), not prose, and may be quoted. */
export const PROSE_MIN_CHARS = 16;
export const REDACTED = "[redacted]";

/** Every string in a JSON value that is long enough to be prose. */
export function proseStrings(value: unknown): string[] {
  if (typeof value === "string") return value.length >= PROSE_MIN_CHARS ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(proseStrings);
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(proseStrings);
  return [];
}

/**
 * Removes from `message` every occurrence of each secret, and of every window
 * of `WINDOW_WORDS` consecutive words of a secret (so a partial echo is caught
 * too). Secrets are replaced longest first, so a token inside a longer secret
 * does not break the longer match.
 */
export function redact(message: string, secrets: readonly string[]): string {
  const patterns = new Set<string>();
  for (const secret of secrets) {
    if (secret.trim() === "") continue;
    patterns.add(secret);
    const words = secret.split(/\s+/).filter((word) => word !== "");
    for (let i = 0; i + WINDOW_WORDS <= words.length; i += 1) patterns.add(words.slice(i, i + WINDOW_WORDS).join(" "));
  }
  let text = message;
  for (const pattern of [...patterns].sort((a, b) => b.length - a.length)) text = text.split(pattern).join(REDACTED);
  // A redacted window may leave words around it that only whitespace variations kept apart; collapse repeats.
  return text.replace(/(?:\[redacted\]\s*){2,}/g, `${REDACTED} `).trimEnd();
}
