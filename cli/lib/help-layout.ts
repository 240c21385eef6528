/**
 * Help and usage-error text fitted to the terminal (08 §3).
 *
 * Commander wraps its own option and argument lists to the help width, but
 * the epilogues (`addHelpText`) are plain strings written by each command.
 * Rather than ask every command to pre-wrap for an unknown width, everything
 * commander writes goes through `reflowHelp` once, at the width of the stream
 * it is written to: consecutive unindented lines are one paragraph (joined
 * and wrapped again), indented lines (option lists, examples) are kept as
 * written unless they are too wide, and then an example's trailing `# comment`
 * moves to its own line and what is still too wide continues, indented, on
 * the next lines. So one rule serves every command, including the ones whose
 * epilogues were hard-wrapped for a wider screen.
 */
import { displayWidth, wrapToWidth } from "./terminal-text";

/** Below this width wrapping makes text worse, not better; lines are left whole. */
const MIN_REFLOW_WIDTH = 30;
/** How far a continuation line is indented past the line it continues. */
const CONTINUATION_INDENT = 4;
/** An example line with a trailing comment: `  $ command   # why`. */
const EXAMPLE_WITH_COMMENT = /^(\s*\$ .*?)\s{2,}# (.*)$/;

/** Re-wraps one chunk of commander output (help, or an error message) to `width`. */
export function reflowHelp(text: string, width: number): string {
  if (width < MIN_REFLOW_WIDTH) return text;
  const endsWithNewline = text.endsWith("\n");
  const lines = (endsWithNewline ? text.slice(0, -1) : text).split("\n");
  const out: string[] = [];
  let paragraph: string[] = [];
  const flush = (): void => {
    if (paragraph.length > 0) out.push(...wrapToWidth(paragraph.join(" "), width));
    paragraph = [];
  };
  for (const line of lines) {
    if (line.trim() === "") {
      flush();
      out.push(line);
    } else if (/^\S/.test(line)) {
      paragraph.push(line.trimEnd());
      // A heading ("Options:", "Examples:") or the usage line ends its paragraph.
      if (line.endsWith(":") || /^Usage: /.test(line)) flush();
    } else {
      flush();
      out.push(...fitIndentedLine(line, width));
    }
  }
  flush();
  return out.join("\n") + (endsWithNewline ? "\n" : "");
}

/** An indented line as one or more lines of at most `width` columns (see the module comment). */
export function fitIndentedLine(line: string, width: number): string[] {
  if (displayWidth(line) <= width) return [line];
  const indent = /^\s*/.exec(line)![0];
  const example = EXAMPLE_WITH_COMMENT.exec(line);
  if (example !== null) {
    const commentIndent = `${indent}${" ".repeat(CONTINUATION_INDENT)}`;
    return [...fitIndentedLine(example[1]!, width), ...hangingWrap(`${commentIndent}# ${example[2]!}`, width, `${commentIndent}  `)];
  }
  return hangingWrap(line, width, `${indent}${" ".repeat(CONTINUATION_INDENT)}`);
}

/** Wraps `line` to `width`; every line after the first starts with `continuation`. */
export function hangingWrap(line: string, width: number, continuation: string): string[] {
  const [first = "", ...rest] = wrapToWidth(line, width);
  if (rest.length === 0) return [first];
  const tail = wrapToWidth(rest.join(" ").trimStart(), Math.max(1, width - displayWidth(continuation)));
  return [first, ...tail.filter((piece) => piece.trim() !== "").map((piece) => `${continuation}${piece}`)];
}

/**
 * Packs `items` (each kept whole when it fits: a `key: value` pair, say) into
 * lines of at most `width` columns, `separator` between items on a line; the
 * first line starts with `first`, the others with `continuation`. An item
 * wider than a whole line is wrapped at its spaces like any text.
 */
export function packItems(first: string, items: readonly string[], separator: string, width: number, continuation: string): string[] {
  const lines: string[] = [];
  let current = first;
  let fresh = true; // no item on the current line yet
  const place = (text: string): void => {
    if (displayWidth(text) <= width) current = text;
    else {
      const wrapped = hangingWrap(text, width, continuation);
      lines.push(...wrapped.slice(0, -1));
      current = wrapped.at(-1)!;
    }
    fresh = false;
  };
  for (const item of items) {
    if (fresh) place(`${current}${item}`);
    else if (displayWidth(`${current}${separator}${item}`) <= width) current = `${current}${separator}${item}`;
    else {
      lines.push(current);
      current = continuation;
      place(`${continuation}${item}`);
    }
  }
  lines.push(current);
  return lines.map((line) => line.trimEnd());
}

/** The one line a usage error ends with, instead of the whole help (08 §3). */
export function helpPointer(commandPath: string): string {
  return `Run "${commandPath} --help" for usage.`;
}
