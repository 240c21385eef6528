/**
 * The characters untrusted text may never carry to a reader, one rule for
 * every place that shows it: the owner's terminal (`magnt review`,
 * cli/lib/terminal-text.ts; 08 §3), the owner gateway's consent page and the
 * client names it signs at registration (06 §3.2, §3.3), the Telegram excerpt
 * (05 §7).
 *
 * Threat model: a stranger chooses the text (a visitor's summary, a client's
 * `client_name`) and the owner reads it next to words the door wrote. Some
 * characters are not text but instructions to whatever displays it:
 * - C0 and C1 controls and DEL (ESC and the 8-bit CSI U+009B start terminal
 *   sequences; CR and BS rewrite what was printed), and the Unicode line and
 *   paragraph separators U+2028/U+2029, which break a line where no line break
 *   is visible in the source;
 * - the bidirectional controls — embeddings and overrides U+202A–U+202E,
 *   isolates U+2066–U+2069, and the invisible marks LRM, RLM, ALM (U+200E,
 *   U+200F, U+061C) — which reorder what the eye reads ("Trojan Source"): a
 *   client named `Claude \u202Eetirw.renwo daer\u202C` would be read as
 *   "Claude read owner.write".
 * The defence is removal (or, where a gap must stay visible, replacement),
 * never escaping: after `stripDisplayControls` none of these is left, so the
 * text shows what it holds in the order it holds it. Letters of every script,
 * combining marks, ZWJ emoji sequences and ZWNJ stay as they are.
 *
 * Pure TypeScript with no dependency, so the Worker and the CLI share it
 * (worker/contracts/ is the one folder both may import).
 */

/** The class without the line feed (U+000A), which some callers keep; every other listed character. */
const CONTROLS_BUT_LINE_FEED = "\\u0000-\\u0009\\u000b-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\u061c";

const ALL = new RegExp(`[\\u000a${CONTROLS_BUT_LINE_FEED}]`, "g");
const ALL_BUT_LINE_FEED = new RegExp(`[${CONTROLS_BUT_LINE_FEED}]`, "g");

export interface DisplayControlOptions {
  /** Leave `\n` in place (a multi-line view that handles line breaks itself). Default: it is a control like the rest. */
  readonly keepLineFeeds?: boolean;
}

function pattern(options: DisplayControlOptions): RegExp {
  return options.keepLineFeeds === true ? ALL_BUT_LINE_FEED : ALL;
}

/** `text` with every display control replaced by what `replace` returns for it. */
export function replaceDisplayControls(text: string, replace: (control: string) => string, options: DisplayControlOptions = {}): string {
  return text.replace(pattern(options), replace);
}

/** `text` with every display control removed. */
export function stripDisplayControls(text: string, options: DisplayControlOptions = {}): string {
  return text.replace(pattern(options), "");
}

/** True when `text` holds a character `stripDisplayControls` would remove. */
export function hasDisplayControls(text: string, options: DisplayControlOptions = {}): boolean {
  return text.search(pattern(options)) !== -1; // search ignores and restores lastIndex
}
