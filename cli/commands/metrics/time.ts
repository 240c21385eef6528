/**
 * Instants for `magnt metrics`: the `--since`/`--until` option values and the
 * events' `time` field (08 §5, §5.3 rule 2).
 *
 * Why strict ISO 8601 and not `Date.parse`: `Date.parse` also accepts free
 * forms ("March 7") read in the machine's local time zone and rolls 30 February
 * over into March, so the same export would count differently on two machines.
 * An instant here is `YYYY-MM-DDTHH:MM[:SS[.fraction]]` with `Z` or `±HH:MM`
 * (events are written with `toISOString()`); a date-time without an offset is
 * read as UTC, and the options also accept a bare date (UTC midnight).
 */

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}:\d{2})?)?$/;

/** The day of the last canonical time parsed (`YYYY-MM-DD`) and its UTC midnight: events come in runs of one day. */
let cachedDay = "";
let cachedDayStart = Number.NaN;

const digit = (text: string, index: number): number => {
  const value = text.charCodeAt(index) - 48;
  return value >= 0 && value <= 9 ? value : Number.NaN;
};

/**
 * The hot path for the form every event is written in, `toISOString()`'s
 * `YYYY-MM-DDTHH:MM:SS.sssZ`: no regex and no allocation once the day is known.
 * Returns undefined for any other form (the general parser decides then).
 */
function parseCanonical(text: string): number | undefined {
  if (
    text.length !== 24 ||
    text.charCodeAt(23) !== 90 /* Z */ ||
    text.charCodeAt(10) !== 84 /* T */ ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58 ||
    text.charCodeAt(19) !== 46
  ) {
    return undefined;
  }
  let dayStart: number;
  if (cachedDay !== "" && text.startsWith(cachedDay)) dayStart = cachedDayStart;
  else {
    dayStart = parseInstant(`${text.slice(0, 10)}T00:00:00Z`);
    if (Number.isNaN(dayStart)) return Number.NaN;
    cachedDay = text.slice(0, 10);
    cachedDayStart = dayStart;
  }
  const hours = digit(text, 11) * 10 + digit(text, 12);
  const minutes = digit(text, 14) * 10 + digit(text, 15);
  const seconds = digit(text, 17) * 10 + digit(text, 18);
  const milliseconds = digit(text, 20) * 100 + digit(text, 21) * 10 + digit(text, 22);
  if (!(hours <= 23 && minutes <= 59 && seconds <= 59 && milliseconds >= 0)) return Number.NaN;
  return dayStart + ((hours * 60 + minutes) * 60 + seconds) * 1000 + milliseconds;
}

/** An event's `time` (strict: a date-time with an offset), or NaN. */
export function parseEventTime(text: unknown): number {
  if (typeof text !== "string") return Number.NaN;
  return parseCanonical(text) ?? parseInstant(text);
}

/**
 * Milliseconds since the epoch, or NaN when `text` is not a valid instant.
 * `allowLocalForms` admits a bare date and a missing offset (both UTC), which
 * option values may use; event times must carry a time and an offset.
 */
export function parseInstant(text: unknown, allowLocalForms = false): number {
  if (typeof text !== "string" || text.length > 40) return Number.NaN;
  const match = DATE_TIME.exec(text);
  if (match === null) return Number.NaN;
  const [, year, month, day, hour, minute, second, fraction, offset] = match;
  if (hour === undefined && !allowLocalForms) return Number.NaN;
  if (hour !== undefined && offset === undefined && !allowLocalForms) return Number.NaN;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  const h = Number(hour ?? 0);
  const mi = Number(minute ?? 0);
  const s = Number(second ?? 0);
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return Number.NaN;
  const dayStart = Date.UTC(y, mo - 1, d);
  if (new Date(dayStart).getUTCDate() !== d) return Number.NaN; // 30 February and friends
  const milliseconds = fraction === undefined ? 0 : Number(`${fraction}00`.slice(0, 3)); // truncated, like Date.parse
  let offsetMinutes = 0;
  if (offset !== undefined && offset !== "Z" && offset !== "z") {
    const sign = offset.startsWith("-") ? -1 : 1;
    const oh = Number(offset.slice(1, 3));
    const om = Number(offset.slice(4, 6));
    if (oh > 23 || om > 59) return Number.NaN;
    offsetMinutes = sign * (oh * 60 + om);
  }
  return dayStart + ((h * 60 + mi) * 60 + s) * 1000 + milliseconds - offsetMinutes * 60_000;
}

/** An instant as printed in the report (always `toISOString()`), or null. */
export function formatInstant(ms: number | null): string | null {
  return ms === null || !Number.isFinite(ms) ? null : new Date(ms).toISOString();
}
