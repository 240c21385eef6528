/**
 * Sanitising of request-derived strings before they enter telemetry (01 §9.5).
 * Control characters are removed so a visitor cannot forge log lines or hide
 * text from a terminal, and values are cut by code points so a surrogate pair
 * is never split into an invalid string.
 */

// U+0000–U+001F, U+007F–U+009F, U+2028, U+2029.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** A sanitised copy of `value` cut to `maxCodePoints`, or null when it is not a string. */
export function sanitizeText(value: unknown, maxCodePoints: number): string | null {
  if (typeof value !== "string") return null;
  const cleaned = value.replace(CONTROL_CHARACTERS, "");
  return truncateCodePoints(cleaned, maxCodePoints);
}

/** Like sanitizeText, but "" instead of null (for the always-string common fields). */
export function sanitizeOrEmpty(value: unknown, maxCodePoints: number): string {
  return sanitizeText(value, maxCodePoints) ?? "";
}

/** Cuts a string to at most `max` code points without splitting a surrogate pair. */
export function truncateCodePoints(value: string, max: number): string {
  // Fast path: UTF-16 length is an upper bound of the code-point count.
  if (value.length <= max) return value;
  let codePoints = 0;
  let index = 0;
  while (index < value.length && codePoints < max) {
    const code = value.charCodeAt(index);
    const isPair =
      code >= 0xd800 && code <= 0xdbff && index + 1 < value.length &&
      value.charCodeAt(index + 1) >= 0xdc00 && value.charCodeAt(index + 1) <= 0xdfff;
    index += isPair ? 2 : 1;
    codePoints += 1;
  }
  return value.slice(0, index);
}

/** Parses a header value as a decimal integer strictly; anything else is null. */
export function parseStrictInteger(value: string | null | undefined): number | null {
  if (typeof value !== "string" || !/^-?\d{1,15}$/.test(value)) return null;
  return Number(value);
}
