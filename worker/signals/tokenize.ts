/**
 * Text → token set (03 §5.1). Deliberately literal: no stemming, no
 * transliteration, no models. The same function tokenises the query and every
 * candidate, so both sides are always compared under the same rules.
 */
import { isStopWord, SHORT_TERM_ALLOWLIST } from "./stopwords";

/** The task fields that are matched; `learned` never is. */
export interface TaskText {
  goal: string;
  blocker?: string | null;
  tried?: string | null;
}

/** A maximal run of letters, marks and numbers. */
const TOKEN = /[\p{L}\p{M}\p{N}]+/gu;
const MIN_CODE_POINTS = 3;

export function taskTokens(task: TaskText): Set<string> {
  const parts = [task.goal, task.blocker, task.tried].filter((part): part is string => typeof part === "string");
  return tokenSet(parts.join(" "));
}

export function tokenSet(text: string): Set<string> {
  const normalised = text.normalize("NFKC").toLowerCase().replaceAll("ё", "е");
  const tokens = new Set<string>();
  for (const [token] of normalised.matchAll(TOKEN)) {
    if (isStopWord(token)) continue;
    if (codePointLength(token) < MIN_CODE_POINTS && !SHORT_TERM_ALLOWLIST.has(token)) continue;
    tokens.add(token);
  }
  return tokens;
}

/** Length in code points; only counted for short tokens, where it decides. */
function codePointLength(token: string): number {
  if (token.length >= MIN_CODE_POINTS * 2) return MIN_CODE_POINTS; // ≥ 3 code points for sure
  let count = 0;
  for (const _ of token) count += 1;
  return count;
}
