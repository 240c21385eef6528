/**
 * Making untrusted text safe and measurable for the owner's terminal (08 §3, §10).
 *
 * Threat model: every visitor-written value (a contact summary, a task goal, a
 * draft body, an agent's self-declared identity…) reaches `magnt review` verbatim
 * from D1. A terminal interprets some characters as commands rather than text:
 * CSI sequences move the cursor, erase lines or recolour the screen (so a row
 * could overwrite or hide another), OSC sequences set the window title, write
 * the clipboard (OSC 52) or plant hyperlinks (OSC 8), DCS/APC/PM/SOS strings
 * reach terminal-specific handlers, bare C0/C1 controls (CR, BS, 8-bit CSI)
 * rewrite what was printed, and Unicode bidirectional controls reorder what the
 * eye reads ("Trojan Source"), so an id or a status could appear to say
 * something it does not. The defence is removal, not escaping: after
 * `sanitiseTerminalText` no character that a terminal treats as a control is
 * left, only printable text (plus `\n` when the caller keeps line breaks).
 *
 * Which characters count as controls is not decided here: every C0/C1
 * control, DEL, U+2028/U+2029 and bidirectional control is the one shared
 * class of worker/contracts/display-controls.ts (the consent page and the
 * client names it shows use the same), applied after the escape sequences
 * with their payloads are gone and line breaks and tabs are handled.
 *
 * `displayWidth` / `truncateToWidth` measure that printable text in terminal
 * columns (wide CJK and emoji count 2, combining marks 0) and cut it on
 * grapheme boundaries, so a table can be fitted to the terminal without
 * splitting a character or an emoji sequence in half.
 */

import { hasDisplayControls, stripDisplayControls } from "../../worker/contracts/display-controls";

/** Shown in place of a line break inside a table cell (08 §3). */
export const LINE_BREAK_MARK = "⏎";
export const ELLIPSIS = "…";

/**
 * Escape sequences, longest forms first:
 * - string controls (OSC `ESC ]`, DCS `ESC P`, SOS `ESC X`, PM `ESC ^`, APC `ESC _`, and their
 *   8-bit forms U+0090/U+0098/U+009D/U+009E/U+009F) up to BEL, ST (`ESC \` or U+009C), or — when
 *   unterminated — the end of the text, which is what a terminal would swallow;
 * - CSI (`ESC [` or U+009B): parameter bytes 0x30–0x3F, intermediates 0x20–0x2F, one final byte
 *   0x40–0x7E;
 * - any other `ESC` sequence: intermediates 0x20–0x2F, then one final byte 0x30–0x7E
 *   (`ESC c` reset, `ESC ( 0` charset switch, `ESC 7` save cursor…).
 * Whatever is left of a malformed sequence is removed by the control-character pass.
 */
const ESCAPE_SEQUENCE = new RegExp(
  [
    "(?:\\u001b[\\]PX^_]|[\\u0090\\u0098\\u009d\\u009e\\u009f])[\\s\\S]*?(?:\\u0007|\\u001b\\\\|\\u009c|$)",
    "(?:\\u001b\\[|\\u009b)[\\u0030-\\u003f]*[\\u0020-\\u002f]*[\\u0040-\\u007e]?",
    "\\u001b[\\u0020-\\u002f]*[\\u0030-\\u007e]?",
  ].join("|"),
  "g",
);

/** Line breaks as visitors type them: CRLF, CR, LF. */
const LINE_BREAK = /\r\n|\r|\n/g;

export interface SanitiseOptions {
  /**
   * `mark`: every line break becomes ⏎, so the value is one line (table cells).
   * `keep`: line breaks become `\n` (the full-record view indents the following lines).
   */
  lineBreaks: "mark" | "keep";
}

/**
 * Returns `text` with every escape sequence and control character removed
 * (tabs become one space, line breaks are marked or kept as `\n`). The only
 * control character that can survive is `\n`, and only with `lineBreaks: "keep"`.
 */
export function sanitiseTerminalText(text: string, options: SanitiseOptions): string {
  const withoutSequences = text.replace(ESCAPE_SEQUENCE, "");
  const breaks = withoutSequences.replace(LINE_BREAK, options.lineBreaks === "mark" ? LINE_BREAK_MARK : "\n").replace(/\t/g, " ");
  return stripDisplayControls(breaks, { keepLineFeeds: true });
}

/** True when `text` still holds a character `sanitiseTerminalText` would remove (besides `\n`). Used by tests and assertions. */
export function hasTerminalControls(text: string): boolean {
  return hasDisplayControls(text, { keepLineFeeds: true });
}

/** Any value as printable terminal text: null/undefined → "", strings sanitised, others through JSON. */
export function terminalText(value: unknown, options: SanitiseOptions): string {
  if (value === null || value === undefined) return "";
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  return sanitiseTerminalText(text, options);
}

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** The grapheme clusters of `text` (user-perceived characters). */
export function graphemes(text: string): string[] {
  return Array.from(segmenter.segment(text), (part) => part.segment);
}

/** Characters that take no column: combining marks, format characters, variation selectors. */
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}\u200b\ufe00-\ufe0f]+$/u;
/** East Asian Wide/Fullwidth blocks and emoji presentation: two columns. */
const WIDE =
  /[\u1100-\u115f\u231a\u231b\u2329\u232a\u23e9-\u23ec\u23f0\u23f3\u25fd\u25fe\u2614\u2615\u2648-\u2653\u267f\u2693\u26a1\u26aa\u26ab\u26bd\u26be\u26c4\u26c5\u26ce\u26d4\u26ea\u26f2\u26f3\u26f5\u26fa\u26fd\u2705\u270a\u270b\u2728\u274c\u274e\u2753-\u2755\u2757\u2795-\u2797\u27b0\u27bf\u2b1b\u2b1c\u2b50\u2b55\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{16fe0}-\u{18aff}\u{1b000}-\u{1b2ff}\u{1f004}\u{1f0cf}\u{1f18e}\u{1f191}-\u{1f19a}\u{1f200}-\u{1f251}\u{1f300}-\u{1f64f}\u{1f680}-\u{1f6ff}\u{1f7e0}-\u{1f7eb}\u{1f90c}-\u{1f9ff}\u{1fa70}-\u{1faff}\u{20000}-\u{3fffd}]|\p{Emoji_Presentation}|\ufe0f/u;

/** Columns one grapheme cluster occupies (0, 1 or 2). */
export function graphemeWidth(grapheme: string): number {
  if (grapheme === "" || ZERO_WIDTH.test(grapheme)) return 0;
  return WIDE.test(grapheme) ? 2 : 1;
}

/** Columns `text` occupies on one terminal line (it must already be sanitised). */
export function displayWidth(text: string): number {
  if (/^[\u0020-\u007e]*$/.test(text)) return text.length;
  let width = 0;
  for (const grapheme of graphemes(text)) width += graphemeWidth(grapheme);
  return width;
}

/**
 * Cuts `text` to at most `width` columns, ending in … when anything was cut;
 * never splits a grapheme cluster (an emoji sequence, a letter with its accent).
 */
export function truncateToWidth(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return "";
  const room = width - 1; // the ellipsis takes one column
  let used = 0;
  let out = "";
  for (const grapheme of graphemes(text)) {
    const w = graphemeWidth(grapheme);
    if (used + w > room) break;
    out += grapheme;
    used += w;
  }
  return out + ELLIPSIS;
}

/**
 * Splits one line into pieces of at most `width` columns, preferring to break
 * after a space; a word longer than the width is broken inside.
 */
export function wrapToWidth(line: string, width: number): string[] {
  if (width <= 0 || displayWidth(line) <= width) return [line];
  const pieces: string[] = [];
  let current = "";
  let currentWidth = 0;
  let lastSpace = -1; // index in `current` just after the last space
  let widthAtLastSpace = 0;
  for (const grapheme of graphemes(line)) {
    const w = graphemeWidth(grapheme);
    if (currentWidth + w > width) {
      if (grapheme === " ") {
        // The line is full exactly at a space: break here and drop the space.
        pieces.push(current);
        current = "";
        currentWidth = 0;
        lastSpace = -1;
        widthAtLastSpace = 0;
        continue;
      }
      if (lastSpace > 0) {
        pieces.push(current.slice(0, lastSpace).trimEnd());
        current = current.slice(lastSpace);
        currentWidth -= widthAtLastSpace;
      } else {
        pieces.push(current);
        current = "";
        currentWidth = 0;
      }
      lastSpace = -1;
      widthAtLastSpace = 0;
    }
    current += grapheme;
    currentWidth += w;
    if (grapheme === " ") {
      lastSpace = current.length;
      widthAtLastSpace = currentWidth;
    }
  }
  if (current !== "") pieces.push(current);
  return pieces;
}
