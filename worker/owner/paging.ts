/**
 * The one keyset pager of the owner's listings (06 §6.1), for contacts and
 * observed goals alike: decode the cursor, read one row more than the page
 * (that extra row is how we know a next page exists without a COUNT), cut the
 * page, and encode the last shown row as the next cursor.
 */
import type { KeysetPosition } from "../storage/contacts/sql";
import { decodeCursor, encodeCursor } from "./cursor";

export const DEFAULT_PAGE_SIZE = 20;

export type Page<Row> = { readonly status: "ok"; readonly rows: readonly Row[]; readonly next_cursor: string | null } | { readonly status: "invalid_cursor" };

export async function keysetPage<Row>(
  request: { readonly cursor: string | undefined; readonly limit: number | undefined; readonly idPattern: RegExp },
  read: (after: KeysetPosition | null, limit: number) => Promise<Row[]>,
  keyOf: (row: Row) => KeysetPosition,
): Promise<Page<Row>> {
  let after: KeysetPosition | null = null;
  if (request.cursor !== undefined) {
    const position = decodeCursor(request.cursor, request.idPattern);
    if (position === null) return { status: "invalid_cursor" };
    after = { createdAt: position.c, id: position.i };
  }
  const limit = request.limit ?? DEFAULT_PAGE_SIZE;
  const rows = await read(after, limit + 1);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const next = rows.length > limit && last !== undefined ? keyOf(last) : null;
  return { status: "ok", rows: page, next_cursor: next === null ? null : encodeCursor({ c: next.createdAt, i: next.id }) };
}
