/**
 * How the owner's lists show a stored time (`review`, `outbox`): `YYYY-MM-DD
 * HH:MM`, UTC as stored, so a date column takes 16 of his 80 columns, not 24;
 * the record views and `--json` keep the full `toISOString()` value.
 */
export function listDate(value: unknown): unknown {
  const match = typeof value === "string" ? /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(value) : null;
  return match === null ? value : `${match[1]} ${match[2]}`;
}
