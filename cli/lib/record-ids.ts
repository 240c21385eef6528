/**
 * Record ids as the owner types them (08 §10): a full id, or a short id — a
 * unique prefix of one, like git's abbreviated hashes — wherever a full id is
 * accepted (`magnt review <kind> <id>`, `magnt signals hide|unhide <id>`).
 * The lists print the short form (`shortIds`), so the owner can copy what he
 * sees back into the next command.
 *
 * The input is checked against the kind's characters before anything runs
 * (a usage error otherwise), so the only values that reach SQL are a
 * validated full id or a validated prefix. A prefix is looked up through the
 * owning storage module's statement: none → exit 1, several → exit 2 listing
 * them.
 */
import {
  CONTACT_ID_PATTERN,
  CONTACT_ID_PREFIX,
  DRAFT_ID_PATTERN,
  MIGRATION_FOR_TABLE,
  OBSERVATION_ID_PATTERN,
  OBSERVATION_ID_PREFIX,
  SIGNAL_ID_PATTERN,
  SIGNAL_ID_PREFIX,
} from "../../worker/contracts";
import { contactIdsWithPrefixStatement } from "../../worker/storage/contacts/sql";
import { observationIdsWithPrefixStatement } from "../../worker/storage/observations/sql";
import { draftIdsWithPrefixStatement } from "../../worker/storage/owner/sql";
import { signalIdsWithPrefixStatement } from "../../worker/storage/signals/sql";
import type { CommandRuntime } from "./command";
import { d1Query, isMissingTable } from "./d1";
import { CheckFailed, EnvironmentError, UsageError } from "./errors";
import { inlineStatement, type SqlStatement } from "./sql";
import type { D1Target } from "./target";

export interface RecordIdKind {
  readonly noun: string;
  /** The type prefix every id of the kind starts with (`mc_`). */
  readonly prefix: string;
  readonly pattern: RegExp;
  /** How a full id looks, for messages. */
  readonly example: string;
  /** The shape of what follows the type prefix: `x` a lower-case hex digit, anything else itself. */
  readonly shape: string;
  readonly idsWithPrefix: (prefix: string, limit: number) => SqlStatement;
  readonly table: string;
}

const UUID_SHAPE = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

/** Whether `tail` can begin an id of this shape (every character where the shape has it). */
function fitsShape(tail: string, shape: string): boolean {
  if (tail.length > shape.length) return false;
  return [...tail].every((char, index) => (shape[index] === "x" ? /^[0-9a-f]$/.test(char) : char === shape[index]));
}

/** The shortest prefix accepted: the type prefix and this many characters after it (65 536 values for hex). */
export const MIN_PREFIX_TAIL = 4;
/** The length of the short form lists print after the type prefix (longer only where two shown ids share it). */
export const SHORT_ID_TAIL = 8;
/** Candidates named when a prefix is ambiguous. */
const CANDIDATES_SHOWN = 10;

export const RECORD_ID_KINDS = {
  contact: {
    noun: "contact",
    prefix: CONTACT_ID_PREFIX,
    pattern: CONTACT_ID_PATTERN,
    example: "mc_<uuid>",
    shape: UUID_SHAPE,
    idsWithPrefix: contactIdsWithPrefixStatement,
    table: "contacts",
  },
  signal: {
    noun: "signal",
    prefix: SIGNAL_ID_PREFIX,
    pattern: SIGNAL_ID_PATTERN,
    example: "ts_<uuid>",
    shape: UUID_SHAPE,
    idsWithPrefix: signalIdsWithPrefixStatement,
    table: "task_signals",
  },
  observation: {
    noun: "observation",
    prefix: OBSERVATION_ID_PREFIX,
    pattern: OBSERVATION_ID_PATTERN,
    example: "ob_<32 hex>",
    shape: "x".repeat(32),
    idsWithPrefix: observationIdsWithPrefixStatement,
    table: "observed_task_signals",
  },
  draft: {
    noun: "draft",
    prefix: "dr_",
    pattern: DRAFT_ID_PATTERN,
    example: "dr_<uuid>",
    shape: UUID_SHAPE,
    idsWithPrefix: draftIdsWithPrefixStatement,
    table: "owner_drafts",
  },
} as const satisfies Record<string, RecordIdKind>;

/** A checked id argument: a full id, or a prefix still to be looked up. */
export type IdArgument = { readonly full: string } | { readonly prefix: string };

/**
 * Trims and lower-cases an id argument (the boundary: ids are lower-case
 * everywhere inside) and checks it: a full id, or the type prefix and at
 * least `MIN_PREFIX_TAIL` of the kind's characters. Anything else is a usage
 * error, before anything runs.
 */
export function parseIdArgument(kind: RecordIdKind, raw: string, command: string): IdArgument {
  const value = raw.trim().toLowerCase();
  if (kind.pattern.test(value)) return { full: value };
  const tail = value.startsWith(kind.prefix) ? value.slice(kind.prefix.length) : null;
  if (tail !== null && tail.length >= MIN_PREFIX_TAIL && fitsShape(tail, kind.shape)) return { prefix: value };
  const short = tail !== null && fitsShape(tail, kind.shape) && tail.length < MIN_PREFIX_TAIL;
  throw new UsageError(
    short
      ? `a short ${kind.noun} id needs at least ${MIN_PREFIX_TAIL} characters after ${kind.prefix} (${command} expects ${kind.example} or a unique prefix of one): ${JSON.stringify(raw.slice(0, 80))}`
      : `not a ${kind.noun} id (${command} expects ${kind.example} or a unique prefix of one, such as ${kind.prefix}0f8e2c1a): ${JSON.stringify(raw.slice(0, 80))}`,
  );
}

/** The full id of an argument: itself, or the one id its prefix names (none → exit 1; several → exit 2 naming them). */
export async function resolveIdArgument(rt: CommandRuntime, target: D1Target, kind: RecordIdKind, id: IdArgument): Promise<string> {
  if ("full" in id) return id.full;
  let rows;
  try {
    rows = await d1Query(rt.ctx, target, inlineStatement(kind.idsWithPrefix(id.prefix, CANDIDATES_SHOWN + 1)), rt.out.quiet);
  } catch (error) {
    if (isMissingTable(error, kind.table)) {
      throw new EnvironmentError(
        `table ${kind.table} does not exist: apply migration ${MIGRATION_FOR_TABLE[kind.table as keyof typeof MIGRATION_FOR_TABLE]} (magnt migrate${target.mode === "remote" ? " --remote" : ""})`,
      );
    }
    throw error;
  }
  const ids = rows.map((row) => String(row.id));
  if (ids.length === 0) throw new CheckFailed(`no ${kind.noun} id starts with ${id.prefix}`);
  if (ids.length > 1) {
    const more = ids.length > CANDIDATES_SHOWN ? ` and more` : "";
    throw new UsageError(`${id.prefix} is ambiguous: it starts ${ids.slice(0, CANDIDATES_SHOWN).join(", ")}${more} (give more characters)`, { showUsage: false });
  }
  return ids[0]!;
}

/**
 * The short forms of ids as a list prints them: the type prefix and
 * `SHORT_ID_TAIL` characters, longer where two of the ids shown would
 * otherwise print the same. (An id not shown may still share the short form;
 * given back, it is then ambiguous, and the command names both.)
 */
export function shortIds(ids: readonly string[], prefixLength: number): string[] {
  let length = prefixLength + SHORT_ID_TAIL;
  const longest = Math.max(0, ...ids.map((id) => id.length));
  while (length < longest && new Set(ids.map((id) => id.slice(0, length))).size < new Set(ids).size) length += 1;
  return ids.map((id) => id.slice(0, length));
}
