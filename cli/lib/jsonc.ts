/**
 * A small JSONC reader for Wrangler configs: `//` and block comments and
 * trailing commas are allowed, strings are left untouched. Enough for the
 * guards of 08 §4 and 00 §3 without a dependency.
 */

/** Removes comments and trailing commas outside strings, then `JSON.parse`s. Throws SyntaxError on bad input. */
export function parseJsonc(text: string): unknown {
  return JSON.parse(stripTrailingCommas(stripComments(text.replace(/^\uFEFF/, ""))));
}

/** Replaces comments outside strings with spaces (keeping line breaks, so JSON errors keep their line numbers). */
function stripComments(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    const next = text[i + 1];
    if (char === '"') {
      const end = endOfString(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (char === "/" && next === "/") {
      while (i < text.length && text[i] !== "\n") i += 1;
    } else if (char === "/" && next === "*") {
      const close = text.indexOf("*/", i + 2);
      const end = close === -1 ? text.length : close + 2;
      out += text.slice(i, end).replace(/[^\n]/g, " ");
      i = end;
    } else {
      out += char;
      i += 1;
    }
  }
  return out;
}

/** Drops a comma that is followed (after whitespace) by `}` or `]`, outside strings. */
function stripTrailingCommas(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const char = text[i]!;
    if (char === '"') {
      const end = endOfString(text, i);
      out += text.slice(i, end);
      i = end;
      continue;
    }
    if (char === ",") {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j += 1;
      if (text[j] === "}" || text[j] === "]") {
        i += 1;
        continue;
      }
    }
    out += char;
    i += 1;
  }
  return out;
}

/** Index just past the string literal starting at `start` (which is a `"`). */
function endOfString(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    if (text[i] === "\\") i += 2;
    else if (text[i] === '"') return i + 1;
    else i += 1;
  }
  return text.length;
}
