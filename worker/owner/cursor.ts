/**
 * The owner listings' opaque cursor (06 §6.1): base64url of
 * `{"c": created_at, "i": id}`. Decoding is strict — anything else, including
 * extra keys or a timestamp not in the stored form, is `invalid_cursor`,
 * so a forged cursor can never become a different query.
 */
import { decodeBase64url, encodeBase64url } from "../lib/base64url";

export interface CursorPosition {
  readonly c: string;
  readonly i: string;
}

const STORED_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodeCursor(position: CursorPosition): string {
  return encodeBase64url(new TextEncoder().encode(JSON.stringify({ c: position.c, i: position.i })));
}

/** Decodes a cursor of `{"c": created_at, "i": id}`; null for anything else (→ `invalid_cursor`). */
export function decodeCursor(cursor: string, idPattern: RegExp): CursorPosition | null {
  const bytes = /^[A-Za-z0-9_-]+$/.test(cursor) ? decodeBase64url(cursor) : null;
  if (bytes === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes));
  } catch {
    return null; // Not UTF-8 JSON: a forged or damaged cursor, answered as invalid_cursor.
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const { c, i, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof c !== "string" || typeof i !== "string") return null;
  return STORED_TIMESTAMP.test(c) && idPattern.test(i) ? { c, i } : null;
}
